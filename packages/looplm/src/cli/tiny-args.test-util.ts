/**
 * Test support: the command-line flags of the tests' tiny runs, so that every CLI and queue test
 * trains the same small model on the same short task.
 */

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
