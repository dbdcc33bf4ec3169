/**
 * Early-exit decoding (packages/looped/src/decode-early-exit.ts) on a trained gated model, over a
 * q sweep: share of layer applications skipped, batch-1 decode tokens/s against running all R
 * steps (same run, interleaved), and the change in next-token perplexity/accuracy on held-out text
 * against full decoding (logits(R)), the paper's threshold exit (all steps run, logits(z)) and
 * the loop truncated at a fixed depth k for every token. Run (docs/early-exit.md trains the model):
 *   pnpm exec tsx --conditions=@loop/source benchmarks/early-exit.ts <checkpoint dir> <corpus file>
 *     [windows=16] [window length=128] [timing tokens=512] [reps=9]
 * The checkpoint folder must hold tokenizer.json (as `looplm train` writes to <run>/final).
 * `pnpm bench early-exit` runs the same sweep (early-exit.bench.ts).
 */
import { earlyExitSweep } from "./early-exit-sweep.js";

const [dir, corpus, ...rest] = process.argv.slice(2);
if (!dir || !corpus) {
  console.error(
    "usage: early-exit.ts <checkpoint dir> <corpus file> [B] [T] [timing tokens] [reps]",
  );
  process.exit(2);
}
const num = (i: number) => (rest[i] ? Number(rest[i]) : undefined);
const res = await earlyExitSweep({
  dir,
  corpus,
  windows: num(0),
  windowLength: num(1),
  timingTokens: num(2),
  reps: num(3),
});
console.log(res.header);
const cols = Object.keys(res.rows[0]!);
const table = [cols, ...res.rows.map((r) => cols.map((k) => r[k]!))];
const widths = cols.map((_, j) => Math.max(...table.map((r) => r[j]!.length)));
for (const r of table) console.log(`| ${r.map((x, j) => x.padStart(widths[j]!)).join(" | ")} |`);
console.log(res.note);
