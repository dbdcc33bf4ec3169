/**
 * A member's result comes from its run folder, and only from a folder that holds this job's
 * finished run: its model in final/, and a last evaluation in the task's metric with one value
 * per loop step, the final value the last one. A log or final/ edited apart from the rest is no
 * result (the coordinator queues the job again, saying why).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readRunInfo } from "@loop/train/node";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { TaskFlags } from "../cli/options/task.js";
import { run } from "../cli/run-in-process.test-util.js";
import { TINY_TRAIN } from "../cli/tiny-args.test-util.js";
import { folderResult } from "./member-result.js";
import { type TrainingJobData, trainingJobId, writeJobMarker } from "./training-job.js";

afterEach(() => vi.restoreAllMocks());

let d: TrainingJobData;
let id: string;
const log = () => join(d.runDir, "log.jsonl");
const config = () => join(d.runDir, "final", "config.json");

beforeAll(async () => {
  const runDir = join(mkdtempSync(join(tmpdir(), "looplm-member-result-")), "1x2");
  await run("train", ...TINY_TRAIN, "--out", runDir);
  // the job that trained it, as the coordinator recorded it
  const info = readRunInfo(runDir);
  d = {
    v: 2,
    label: "1⊗2",
    runDir,
    task: { task: "phop" } as TaskFlags,
    taskInfo: info.task as Record<string, unknown>,
    config: info.model,
    train: info.train,
    evalCount: 8,
  };
  id = trainingJobId(d);
  writeJobMarker(d, id);
}, 60_000);

/** `folderResult` with `file` edited by `edit` (and put back afterwards). */
function editedResult(file: string, edit: (text: string) => string) {
  const before = readFileSync(file, "utf8");
  writeFileSync(file, edit(before));
  try {
    return folderResult(d, id);
  } finally {
    writeFileSync(file, before);
  }
}

/** `text` with its last line's JSON changed by `f`. */
const lastLine = (f: (r: { eval: Record<string, unknown> }) => void) => (text: string) => {
  const lines = text.trimEnd().split("\n");
  const r = JSON.parse(lines.at(-1)!);
  f(r);
  lines[lines.length - 1] = JSON.stringify(r);
  return `${lines.join("\n")}\n`;
};

describe("a member's result from its run folder", () => {
  it("is the last evaluation of the log of a finished run of the job", () => {
    const got = folderResult(d, id);
    const last = JSON.parse(readFileSync(log(), "utf8").trimEnd().split("\n").at(-1)!);
    expect(got).toEqual({ ok: true, steps: 1, eval: last.eval });
  });

  it("is none where the log or final/ were edited apart from the rest", () => {
    const final = (got: ReturnType<typeof folderResult>) => (got.ok ? "a result" : got.why);
    expect(
      final(
        editedResult(
          log(),
          lastLine((r) => {
            r.eval.final = 0.99;
          }),
        ),
      ),
    ).toMatch(/^\S+log\.jsonl step 1: its final 0\.99 is not its last loop step's value [\d.]+$/);
    expect(
      final(
        editedResult(
          log(),
          lastLine((r) => {
            r.eval.metric = "ppl";
          }),
        ),
      ),
    ).toMatch(/step 1: its metric "ppl" is not accuracy \(the metric of task phop\)$/);
    expect(
      final(
        editedResult(
          log(),
          lastLine((r) => {
            r.eval.per_step = [r.eval.final];
          }),
        ),
      ),
    ).toMatch(/step 1: its per_step is not one value per loop step of the model \(2\)$/);
    expect(
      final(editedResult(config(), (t) => JSON.stringify({ ...JSON.parse(t), d_model: 32 }))),
    ).toBe(`${config()} is another model's than the job's (a final/ of another run)`);
    // and the folder, put back, holds the result again
    expect(folderResult(d, id).ok).toBe(true);
  });
});
