/**
 * `sweep --resume` with a larger --steps: every member, kept or new, follows the schedule the
 * sweep was planned with (as `train --resume` extends a run), and the output says which members
 * were extended and how; members on different schedules are refused, naming --steps.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { run } from "./run-in-process.test-util.js";

afterEach(() => vi.restoreAllMocks());

const sweep = [
  ...["sweep", "--protocol", "iso-param", "--task", "phop", "--alphabet", "3", "--length", "12"],
  ...["--hops", "2", "--d-model", "16", "--d-state", "4", "--headdim", "8", "--chunk", "8"],
  ...["--batch", "4", "--eval-every", "0", "--eval-count", "8", "--warmup", "1", "--base", "1"],
];
const log = (dir: string, run: string) =>
  readFileSync(join(dir, run, "log.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { step: number; lr: number });
const runTrain = (dir: string, run: string) =>
  JSON.parse(readFileSync(join(dir, run, "run.json"), "utf8")).train as {
    steps: number;
    scheduleSteps?: number;
    minLr: number;
  };

describe("sweep --resume with more --steps", () => {
  it("extends every kept member like train --resume, trains new ones on the same schedule, and says so", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "looplm-sweep-ext-")), "s");
    await run(...sweep, "--loops", "1,2", "--steps", "4", "--out", dir);
    const { out, err } = await run(
      ...sweep,
      ...["--loops", "1,2,4", "--steps", "8", "--out", dir, "--resume"],
    );
    const minLr = runTrain(dir, "1x1").minLr.toExponential(2);
    const notes = [
      `--steps 8 extends this sweep, planned for 4 steps, as train --resume extends a run: every member's learning rate follows the 4-step warmup-cosine schedule and stays at its final value ${minLr} for steps 5–8`,
      "extended: 1⊗1 (from 4 steps), 1⊗2 (from 4 steps)",
      "trained from the start on the same schedule: 1⊗4",
    ];
    // below the table, and as the sweep starts
    expect(out).toContain(notes.join("\n"));
    for (const n of notes) expect(err).toContain(`looplm: ${n}`);
    expect(err).toContain("[1/3] 1⊗1: extending from 4 to 8 steps, from its last checkpoint");
    for (const r of ["1x1", "1x2", "1x4"]) {
      expect(runTrain(dir, r)).toMatchObject({ steps: 8, scheduleSteps: 4 });
      const steps = log(dir, r);
      expect(steps.map((s) => s.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      // one schedule for all: the same learning rate at every step, the floor after step 4
      expect(steps.map((s) => s.lr)).toEqual(log(dir, "1x1").map((s) => s.lr));
      expect(new Set(steps.slice(4).map((s) => s.lr)).size).toBe(1);
    }
  }, 300_000);

  it("refuses members on different schedules, naming --steps", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "looplm-sweep-mixed-")), "s");
    await run(...sweep, "--loops", "1,2", "--steps", "4", "--out", dir);
    // 1⊗2 as if it had been started for 6 steps
    const p = join(dir, "1x2", "run.json");
    const info = JSON.parse(readFileSync(p, "utf8"));
    writeFileSync(p, JSON.stringify({ ...info, train: { ...info.train, steps: 6 } }));
    await expect(
      run(...sweep, "--loops", "1,2", "--steps", "8", "--out", dir, "--resume"),
    ).rejects.toThrow(
      `--steps: the members of the sweep in ${dir} follow different learning-rate schedules (1⊗1: 4 steps, 1⊗2: 6 steps)`,
    );
  }, 300_000);
});
