/**
 * Under `pnpm looplm`, killing pnpm alone (its shell does not pass SIGTERM on) ends the looplm
 * process within seconds whatever the command — here an evaluation of a billion rows and an
 * endless generation, which no signal handler of their own watches.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LoopedModel, makeConfig } from "@loop/looped";
import { saveCheckpoint } from "@loop/looped/node";
import { beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../..", import.meta.url));
let model: string;

beforeAll(() => {
  const run = mkdtempSync(join(tmpdir(), "looplm-launcher-"));
  model = join(run, "final");
  const cfg = makeConfig({
    backbone: "mamba",
    vocab_size: 32,
    d_model: 16,
    n_layers: 1,
    n_loops: 2,
    ssm: { d_state: 8, headdim: 8, chunk_size: 8 },
  });
  saveCheckpoint(model, new LoopedModel(cfg, { seed: 1 }));
  writeFileSync(
    join(run, "run.json"),
    JSON.stringify({ task: { name: "mano", max_ops: 2 }, model: cfg, train: {} }),
  );
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const descendants = (pid: number): number[] =>
  spawnSync("pgrep", ["-P", String(pid)], { encoding: "utf8" })
    .stdout.split("\n")
    .filter(Boolean)
    .map(Number)
    .flatMap((k) => [k, ...descendants(k)]);

/** Start `pnpm looplm …args`, wait until `ready` matches its output, kill pnpm alone. */
async function killLauncher(args: string[], ready: RegExp): Promise<number[]> {
  const child = spawn("pnpm", ["looplm", ...args], {
    cwd: root,
    env: { ...process.env, LOOPLM_THREADS: "1" },
  });
  let seen = "";
  let tree: number[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`never ready; output: ${seen}`)), 90_000);
      const hear = (c: Buffer) => {
        seen += c.toString();
        if (ready.test(seen)) {
          clearTimeout(t);
          resolve();
        }
      };
      child.stdout.on("data", hear);
      child.stderr.on("data", hear);
      child.on("exit", () => reject(new Error(`exited early; output: ${seen}`)));
    });
    tree = descendants(child.pid!);
    expect(tree.length).toBeGreaterThan(0);
    child.kill("SIGTERM");
    for (let i = 0; i < 50 && tree.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
    return tree.filter(alive);
  } finally {
    child.kill("SIGKILL");
    for (const p of tree) if (alive(p)) process.kill(p, "SIGKILL");
  }
}

describe("pnpm looplm, pnpm killed alone", () => {
  it("ends a long evaluation within seconds", { timeout: 120_000 }, async () => {
    const left = await killLauncher(
      ["eval", "--model", model, "--count", "1000000000"],
      /eval: \d+\/1000000000 rows/,
    );
    expect(left).toEqual([]);
  });

  it("ends an endless generation within seconds", { timeout: 120_000 }, async () => {
    const left = await killLauncher(
      ["generate", "--model", model, "--tokens", "1,2", "--max-new", "2147483647"],
      /^\d+( \d+){20}/m,
    );
    expect(left).toEqual([]);
  });
});
