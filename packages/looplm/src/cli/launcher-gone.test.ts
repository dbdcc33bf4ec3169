/**
 * Under `pnpm looplm`, killing pnpm alone (its shell does not pass SIGTERM on) ends the looplm
 * process within seconds whatever the command — here an evaluation of a billion rows and an
 * endless generation, which no signal handler of their own watches.
 */
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { alive, descendants, savedTinyRun, spawnCli, untilOutput } from "./spawn-cli.test-util.js";

let model: string;

beforeAll(() => {
  model = join(savedTinyRun("looplm-launcher-"), "final");
});

/** Start `pnpm looplm …args`, wait until `ready` matches its output, kill pnpm alone. */
async function killLauncher(args: string[], ready: RegExp): Promise<number[]> {
  const child = spawnCli(args, true);
  let tree: number[] = [];
  try {
    await untilOutput(child, ready, ["stdout", "stderr"]);
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
