/**
 * `looplm generate` on the webgpu backend, full depth (every token through all R loop steps).
 * There is no recurrent decode step on the device yet, so each new token recomputes the forward
 * of the whole sequence so far on the GPU (O(L²) work over L tokens, against O(L) for the CPU's
 * recurrent decoding) and reads back only the last position's logits. The sampling is the CPU's
 * (`sampleToken` with the same seeded stream), so the tokens match `generate` on the CPU up to
 * float32 ties.
 */
import { type GenerateOptions, type LoopedModel, sampleToken, toDevice } from "@loop/looped";
import { Rng } from "@loop/tensor";
import { type GpuContext, gpuModelOps } from "@loop/webgpu";

export async function generateGpu(
  ctx: GpuContext,
  model: LoopedModel,
  prompt: readonly number[],
  opts: GenerateOptions,
): Promise<number[]> {
  if (opts.policy && opts.policy.kind !== "full")
    throw new Error(
      `generate on webgpu runs every token through all loop steps; policy "${opts.policy.kind}" needs --backend native or portable`,
    );
  const V = model.config.vocab_size;
  if (prompt.length === 0) throw new Error("generate: prompt must contain at least one token");
  for (const t of prompt)
    if (!Number.isInteger(t) || t < 0 || t >= V)
      throw new Error(`generate: prompt token ${t} is outside [0, ${V})`);
  if (!Number.isInteger(opts.maxNewTokens) || opts.maxNewTokens < 0)
    throw new Error(`generate: maxNewTokens must be an integer ≥ 0, got ${opts.maxNewTokens}`);
  const temperature = opts.temperature ?? 1;
  const topK = opts.topK ?? 0;
  const rng = new Rng(opts.seed ?? 0);
  const ops = gpuModelOps(ctx);
  const gm = toDevice(model, ops);
  const seq = [...prompt];
  const out: number[] = [];
  try {
    for (let i = 0; i < opts.maxNewTokens; i++) {
      const L = seq.length;
      const logits = ops.noGrad(() => {
        const tokens = ops.uploadInt(Int32Array.from(seq), [1, L]);
        return gm.forward(tokens, { steps: "last" }).logits[0]!;
      });
      // the last position's row only (the device reads a range; ops.read would read all L rows)
      const row = new Float32Array(await ctx.read(logits.buffer, V, (L - 1) * V * 4));
      ops.releaseTransients();
      const next = sampleToken(row, temperature, topK, rng);
      out.push(next);
      if (next === opts.stopToken) break;
      seq.push(next);
    }
  } finally {
    ops.releaseTransients();
    gm.dispose();
  }
  return out;
}
