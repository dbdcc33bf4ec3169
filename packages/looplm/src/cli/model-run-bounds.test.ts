/**
 * Commands that run a saved model (generate, forward, eval, export-hf) estimate the memory it
 * needs from its config before building it: a config.json edited to loop 16 million times is
 * refused at once in one line naming the amount and what to lower, instead of growing memory
 * with no output. (Beyond 2^24 a size is refused by the config itself: config-bounds.test.ts.)
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "./run-in-process.test-util.js";
import { cliWithin, savedTinyRun } from "./spawn-cli.test-util.js";

/** A saved tiny run whose final/config.json loops `loops` times. */
function loopedRun(loops: number): string {
  const dir = savedTinyRun("looplm-bounds-");
  const p = join(dir, "final", "config.json");
  writeFileSync(p, JSON.stringify({ ...JSON.parse(readFileSync(p, "utf8")), n_loops: loops }));
  return dir;
}
const NEEDS = (command: string) =>
  new RegExp(
    `^(looplm: )?${command} with this model needs at least [\\d.]+ [KMGTPE]iB of memory \\(.*; this machine has [\\d.]+ [KMGTPE]iB\\): lower .*n_loops or n_layers in its config.json, or use a smaller model\\n?$`,
  );

describe("a saved model's config is bounded by memory before it is built", () => {
  it("generate on a config looping 2^24 times is refused at once (a child with a time limit)", () => {
    const dir = loopedRun(2 ** 24);
    const r = cliWithin(["generate", "--model", dir, "--tokens", "1,2", "--max-new", "4"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(NEEDS("generate"));
    expect(r.stderr).toMatch(
      /for the decode state of 16777216 loop steps × 1 layers over 6 tokens/,
    );
  });

  it("forward and export-hf on such a config are refused the same way", async () => {
    const dir = loopedRun(2 ** 24);
    const inputs = join(dir, "in.json");
    writeFileSync(inputs, JSON.stringify({ tokens: [[1, 2, 3, 4]], targets: [[2, 3, 4, 5]] }));
    await expect(
      run("forward", "--model", join(dir, "final"), "--input", inputs, "--out", join(dir, "o")),
    ).rejects.toThrow(NEEDS("forward"));
    // (export-hf refuses a looped model by name before estimating anything)
    await expect(
      run("export-hf", "--model", join(dir, "final"), "--out", join(dir, "hf")),
    ).rejects.toThrow(/loop/);
  });

  it("eval on such a config is refused before the model is built, naming its batch", async () => {
    const dir = loopedRun(2 ** 24);
    await expect(
      run("eval", "--model", dir, "--count", "4", "--out", join(dir, "e.json")),
    ).rejects.toThrow(/^evaluating this setting needs at least [\d.]+ [KMGTPE]iB of memory/);
  });

  it("--tokens names the item that is not a token id", async () => {
    const dir = savedTinyRun("looplm-bounds-");
    await expect(
      run("generate", "--model", dir, "--tokens", "0,-1", "--max-new", "1"),
    ).rejects.toThrow(
      '--tokens: item 2 of "0,-1" is "-1", not a whole number ≥ 0; give comma-separated whole numbers such as 0,1,2',
    );
  });
});
