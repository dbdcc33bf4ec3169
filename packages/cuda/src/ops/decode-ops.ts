/*
 * The CUDA backend's decode kernels as a `DecodeOps` slice (@loop/tensor): the Mamba-2 step
 * (mamba2-step.ts) and attention over a device KV cache with RoPE at the token's position
 * (attention-decode.ts). Inference only: nothing is recorded.
 */
import type { DecodeOps } from "@loop/tensor";
import type { CudaContext } from "../context.js";
import type { CudaTensor } from "../cuda-tensor.js";
import { appendOn, ropeAt } from "./attention-decode.js";
import { mamba2StepState } from "./mamba2-step.js";

/** `DecodeOps` on `ctx`'s device. */
export function cudaDecodeOps(ctx: CudaContext): DecodeOps<CudaTensor, CudaTensor> {
  return {
    mamba2Step: (sizes, zx, state, w, opts = {}) =>
      ctx.withRecording(false, () =>
        mamba2StepState(ctx, sizes, zx, state, w, { rows: opts.rows, absorb: opts.absorb }),
      ),
    attendStep: (cache, q, k, v, position, opts) =>
      ctx.withRecording(false, () => {
        const cap = cache.k.shape[2]!;
        const rot = (x: CudaTensor) => ropeAt(ctx, x, opts.theta, position, cap);
        return appendOn(ctx, cache, q && rot(q), rot(k), v, position, opts.rows ?? null);
      }),
  };
}
