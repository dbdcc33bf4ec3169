/**
 * Training-step memory of a looped model: activations of all R·N layer applications stored for
 * the backward pass (default) vs recomputed per loop step (activation checkpointing). Measured
 * as the scratch pool a step needs (every activation and gradient buffer of the step lives
 * there) plus the process's peak RSS growth, for the benchmark configurations.
 */
import { LoopedModel, parseConfig } from "@loop/looped";
import { backward, intTensor, Rng, releaseScratch, scratchBytes, withScratch } from "@loop/tensor";
import type { BenchContext } from "./lib/context.js";

export const name = "memory";
export const description =
  "training-step memory: stored activations vs per-loop-step recomputation";

const CONFIGS = [
  { label: "mamba D64 1⊗12, 32×256", d: 64, N: 1, R: 12, ds: 16, hd: 16, V: 32, B: 32, T: 256 },
  { label: "mamba D128 4⊗6, 32×128", d: 128, N: 4, R: 6, ds: 32, hd: 32, V: 32, B: 32, T: 128 },
  { label: "mamba D256 2⊗4, 16×256", d: 256, N: 2, R: 4, ds: 64, hd: 64, V: 256, B: 16, T: 256 },
];

export async function run(ctx: BenchContext): Promise<void> {
  const rows = [];
  for (const c of CONFIGS) {
    const cfg = parseConfig({
      backbone: "mamba",
      vocab_size: c.V,
      d_model: c.d,
      n_layers: c.N,
      n_loops: c.R,
      ssm: { d_state: c.ds, headdim: c.hd, chunk_size: 64 },
    });
    const model = new LoopedModel(cfg, { seed: 1 });
    const rng = new Rng(2);
    const ids = Array.from({ length: c.B * c.T }, () => rng.int(c.V));
    const tokens = intTensor(ids, [c.B, c.T]);
    const targets = intTensor(ids, [c.B, c.T]);
    const row: Record<string, string | number> = { config: c.label };
    for (const checkpointing of [false, true]) {
      releaseScratch();
      const t = await ctx.time(
        () =>
          withScratch(() => {
            for (const p of model.parameters()) p.tensor.grad = null;
            backward(model.finalLoss(tokens, targets, { checkpointing }));
          }),
        { warmup: 0, repeats: ctx.quick ? 1 : 2 },
      );
      const key = checkpointing ? "recompute" : "stored";
      row[`${key} MiB`] = Number((scratchBytes() / 2 ** 20).toFixed(1));
      row[`${key} s/step`] = Number((t.medianMs / 1000).toFixed(2));
    }
    rows.push(row);
  }
  ctx.table(rows, "Training-step memory (scratch pool: activations + gradients of one step)");
  ctx.log("Parameters and AdamW moments come on top (3 × 4 bytes per parameter).");
}
