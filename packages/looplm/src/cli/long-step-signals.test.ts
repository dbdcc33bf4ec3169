/**
 * SIGTERM in the middle of a long training step (several seconds on one thread) stops the
 * process within seconds, not after the step: the unfinished step is dropped and the last
 * checkpoint kept. Under `pnpm looplm`, killing pnpm alone ends the training process as soon,
 * although its main thread is busy in the step.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { alive, descendants, spawnCli } from "./spawn-cli.test-util.js";

const tmp = () => mkdtempSync(join(tmpdir(), "looplm-long-step-"));

/** A run whose steps take seconds each on one thread, a checkpoint after every step. */
const slow = (out: string) => [
  "train",
  ...["--task", "phop", "--alphabet", "3", "--length", "64", "--hops", "2"],
  ...["--d-model", "128", "--layers", "4", "--loops", "2", "--batch", "320"],
  ...["--eval-every", "0", "--eval-count", "8", "--warmup", "0", "--steps", "50"],
  ...["--ckpt-every", "1", "--out", out],
];

function start(
  args: string[],
  viaPnpm: boolean,
): {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: string | null; at: number }>;
} {
  const child = spawnCli(args, viaPnpm);
  child.stdout!.resume();
  child.stderr!.resume();
  const done = new Promise<{ code: number | null; signal: string | null; at: number }>((res) =>
    child.on("exit", (code, signal) => res({ code, signal, at: performance.now() })),
  );
  return { child, done };
}

/** The step of the run's newest checkpoint, once there is one (at most two minutes). */
async function firstCheckpoint(dir: string): Promise<number> {
  const latest = join(dir, "checkpoints", "latest.json");
  for (let i = 0; i < 1200; i++) {
    if (existsSync(latest))
      return (JSON.parse(readFileSync(latest, "utf8")) as { step: number }).step;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no checkpoint in ${dir} after two minutes`);
}

describe("a signal during a long step", () => {
  it("SIGTERM stops within seconds, keeping the last checkpoint", {
    timeout: 180_000,
  }, async () => {
    const out = join(tmp(), "r");
    const { child, done } = start(slow(out), false);
    try {
      const step = await firstCheckpoint(out);
      // well inside the next step (each takes seconds)
      await new Promise((r) => setTimeout(r, 300));
      const sent = performance.now();
      child.kill("SIGTERM");
      const res = await done;
      expect(res.at - sent).toBeLessThan(3000);
      expect(res.signal ?? res.code).toMatch(/^(SIGTERM|143)$/);
      const latest = JSON.parse(readFileSync(join(out, "checkpoints", "latest.json"), "utf8"));
      expect(latest.step).toBe(step);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("under pnpm looplm, killing pnpm alone ends the training process within seconds", {
    timeout: 180_000,
  }, async () => {
    const out = join(tmp(), "r");
    const { child, done } = start(slow(out), true);
    let tree: number[] = [];
    try {
      await firstCheckpoint(out);
      tree = descendants(child.pid!);
      await new Promise((r) => setTimeout(r, 300));
      const sent = performance.now();
      child.kill("SIGTERM");
      await done;
      for (let i = 0; i < 50 && tree.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
      expect(tree.filter(alive)).toEqual([]);
      expect(performance.now() - sent).toBeLessThan(5000);
    } finally {
      for (const p of tree) if (alive(p)) process.kill(p, "SIGKILL");
    }
  });
});
