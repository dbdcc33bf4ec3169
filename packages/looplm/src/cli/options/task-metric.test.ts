/** The metric each task is known to report without building it is the built task's own. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildTask, TASK_DEFAULTS, TASK_METRIC, TASKS } from "./task.js";

describe("TASK_METRIC", () => {
  it("is Task.metric of the task each name builds", async () => {
    const corpus = join(mkdtempSync(join(tmpdir(), "looplm-task-metric-")), "c.txt");
    writeFileSync(corpus, "a small corpus of a few words, written twice.\n".repeat(40));
    for (const task of TASKS) {
      const t = await buildTask({ ...TASK_DEFAULTS, task, corpus, tokenizer: "char", seqLen: 8 });
      expect(TASK_METRIC[task], task).toBe(t.metric);
    }
  });
});
