/**
 * Test support: the command-line flags of the tests' tiny runs, so that every CLI and queue test
 * trains the same small model on the same short task.
 */
import type { Command } from "commander";
import { vi } from "vitest";

/** A Mamba-2 model small enough to train for a few steps in a test. */
export const TINY_MODEL = ["--d-model", "16", "--d-state", "4", "--headdim", "8", "--chunk", "8"];

/** The p-hop task (alphabet 3, 2 hops) with sequences of `length` tokens, on the tiny model. */
export function tinyPhop(length: number): string[] {
  return [
    ...["--task", "phop", "--alphabet", "3", "--length", String(length), "--hops", "2"],
    ...TINY_MODEL,
  ];
}

/** A sweep of one block looped once and twice at equal parameters (add the task and model). */
export const ISO_SWEEP = ["sweep", "--protocol", "iso-param", "--base", "1", "--loops", "1,2"];

/** `looplm train` on p-hop (length 12) and the tiny model looped twice, one step, no evaluation. */
export const TINY_TRAIN = [
  ...tinyPhop(12),
  "--loops",
  "2",
  ...["--batch", "4", "--eval-every", "0", "--eval-count", "8", "--warmup", "0", "--steps", "1"],
];

/** Run the CLI in this process with its output silenced (commander throws instead of exiting). */
export async function runQuiet(buildProgram: () => Command, ...args: string[]): Promise<void> {
  vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  try {
    await buildProgram()
      .exitOverride()
      .parseAsync(["node", "looplm", ...args]);
  } finally {
    vi.restoreAllMocks();
  }
}
