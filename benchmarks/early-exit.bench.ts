/**
 * `pnpm bench early-exit`: the early-exit decoding q sweep (early-exit-sweep.ts) on a trained
 * gated checkpoint — layer applications skipped, batch-1 tokens/s against full-R decoding, and
 * perplexity/accuracy against full decoding, threshold exit and fixed-depth truncation.
 * The checkpoint is `LOOP_EARLY_EXIT_MODEL` (default runs/ee-g2/final, trained by the commands in
 * docs/early-exit.md) on the corpus `LOOP_EARLY_EXIT_CORPUS` (default the shared Tiny
 * Shakespeare); without one the benchmark says how to make it and measures nothing.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { earlyExitSweep } from "./early-exit-sweep.js";
import type { BenchContext } from "./lib/context.js";

export const name = "early-exit";
export const description =
  "early-exit decoding q sweep on a trained gated model: skipped layers, tok/s, ppl/acc change";

export async function run(ctx: BenchContext): Promise<void> {
  const dir = resolve(process.env.LOOP_EARLY_EXIT_MODEL ?? "runs/ee-g2/final");
  const corpus = process.env.LOOP_EARLY_EXIT_CORPUS ?? "testdata/data/tinyshakespeare.txt";
  if (!existsSync(resolve(dir, "tokenizer.json"))) {
    ctx.log(
      `early-exit: no trained gated checkpoint at ${dir} (set LOOP_EARLY_EXIT_MODEL, or train ` +
        "runs/ee-g2 with the commands in docs/early-exit.md); nothing measured.",
    );
    return;
  }
  await ctx.setThreads(1); // batch-1 decoding of a small model: threads only add overhead
  const res = await earlyExitSweep(
    ctx.quick
      ? { dir, corpus, windows: 4, windowLength: 64, timingTokens: 64, reps: 1 }
      : { dir, corpus, windows: 16, windowLength: 128, timingTokens: 512, reps: 9 },
  );
  ctx.log(res.header);
  ctx.table(res.rows);
  ctx.log(res.note);
}
