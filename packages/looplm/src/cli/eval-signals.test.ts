/**
 * A signal during training's evaluation: the step's checkpoint was written before the evaluation
 * began, the evaluation stops at its next batch, the process prints the stop and resume lines,
 * removes run.lock and exits 143; `--resume` logs the step, evaluating it again, and finishes.
 * (Before, the process died with no word, left its lock, and lost every step since the last
 * checkpoint: none was written before the final evaluation.)
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "./run-in-process.test-util.js";
import { spawnCli, untilOutput } from "./spawn-cli.test-util.js";
import { tinyPhop } from "./tiny-args.test-util.js";

const lines = (p: string) =>
  readFileSync(p, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { step: number; eval?: unknown });

describe("a signal during training's final evaluation", () => {
  it("stops with the resume line, no lock, a checkpoint of the last step; --resume finishes", {
    timeout: 180_000,
  }, async () => {
    const out = join(mkdtempSync(join(tmpdir(), "looplm-eval-signal-")), "r");
    // two quick steps, then an evaluation of millions of rows: seconds at least, with progress
    const args = [...tinyPhop(16), "--loops", "2", "--batch", "4", "--steps", "2"];
    const child = spawnCli([
      "train",
      ...args,
      ...["--eval-every", "0", "--eval-count", "5000000", "--warmup", "0", "--out", out],
    ]);
    let err = "";
    child.stderr!.on("data", (c) => (err += c));
    child.stdout!.resume();
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    try {
      await untilOutput(child, /evaluation: \d+\/5000000 rows/);
      child.kill("SIGTERM");
      expect(await exited).toBe(143);
    } finally {
      child.kill("SIGKILL");
    }
    const ck = join(out, "checkpoints", "step-000002");
    expect(err).toContain(
      `looplm: stopped by SIGTERM after step 2; checkpoint saved in ${ck}. Resume with:`,
    );
    expect(existsSync(join(out, "run.lock"))).toBe(false);
    expect(existsSync(join(out, "final"))).toBe(false);
    // the log lacks step 2 (its evaluation did not end); the checkpoint keeps its line
    expect(lines(join(out, "log.jsonl")).map((l) => l.step)).toEqual([1]);
    const resumed = await run("train", "--out", out, "--resume", "--eval-count", "8");
    expect(resumed.err).toContain(
      "the evaluation of step 2 was interrupted before it was logged: it runs again",
    );
    const log = lines(join(out, "log.jsonl"));
    expect(log.map((l) => l.step)).toEqual([1, 2]);
    expect(log[1]!.eval).toBeDefined();
    expect(existsSync(join(out, "final", "model.safetensors"))).toBe(true);
  });
});
