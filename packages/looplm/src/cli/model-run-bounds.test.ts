/**
 * Commands that run a saved model (generate, forward, eval, export-hf) estimate the memory it
 * needs from its config before building it: a config.json edited to loop 16 million times is
 * refused at once in one line naming the amount and what to lower, instead of growing memory
 * with no output. (Beyond 2^16 loop steps the config itself is refused: config-bounds.test.ts.)
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
    expect(r.stderr).toBe(
      `looplm: ${join(dir, "final", "config.json")}: config: n_loops 16777216 is more loop steps than any model runs (at most 65536: every token runs through each); lower it\n`,
    );
  });

  it("forward of many tokens through 65536 loop steps is refused before the model is built", async () => {
    const dir = loopedRun(2 ** 16);
    const inputs = join(dir, "in.json");
    const row = Array.from({ length: 100_000 }, (_v, i) => i % 32);
    writeFileSync(inputs, JSON.stringify({ tokens: [row], targets: [row] }));
    await expect(
      run("forward", "--model", join(dir, "final"), "--input", inputs, "--out", join(dir, "o")),
    ).rejects.toThrow(NEEDS("forward"));
    // (export-hf refuses a looped model by name before estimating anything)
    await expect(
      run("export-hf", "--model", join(dir, "final"), "--out", join(dir, "hf")),
    ).rejects.toThrow(/loop/);
  });

  it("eval on a config looping 65536 times is refused before the model is built", async () => {
    const dir = loopedRun(2 ** 16);
    await expect(
      run(
        "eval",
        "--model",
        dir,
        "--count",
        "64",
        "--batch-size",
        "64",
        "--out",
        join(dir, "e.json"),
      ),
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
