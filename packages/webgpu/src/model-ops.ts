/*
 * `ModelOps` (@loop/tensor) on a WebGPU device: the model's ops as this package's WGSL ops, for
 * the model written once in @loop/looped (`toDevice(model, gpuModelOps(ctx))`). Float and index
 * tensors are both `GpuTensor` (f32 and i32). The attention op is composed here from the linear
 * (q/k/v as one GEMM each way, linearMulti), RoPE and tiled attention kernels (the CPU fuses it
 * differently; the values agree to float32 rounding). Every op records its backward on the GPU
 * tape (backward.ts).
 */
import type { DecodeOps, ModelOps } from "@loop/tensor";
import { gpuDecodeOps } from "./decode-ops.js";
import type { GpuContext } from "./gpu-context.js";
import { type GpuTensor, releaseTransients, uploadTensor } from "./gpu-tensor.js";
import { forgetInts, rememberInts } from "./host-ints.js";
import { attention } from "./ops/attention.js";
import { add } from "./ops/binary.js";
import { causalConv1dSiluSplit } from "./ops/conv-silu-split.js";
import { crossEntropy } from "./ops/cross-entropy.js";
import { embedding } from "./ops/embedding.js";
import { exitPdf } from "./ops/exit-pdf.js";
import { gateLogits } from "./ops/gate-logits.js";
import { gatedRmsnorm } from "./ops/gated-rmsnorm.js";
import { linearMulti } from "./ops/linear-multi.js";
import { linearSplit } from "./ops/linear-split.js";
import { softplusBias } from "./ops/mamba2-ops.js";
import { linear } from "./ops/matmul.js";
import { rmsnorm } from "./ops/rmsnorm.js";
import { ropePair } from "./ops/rope.js";
import { reshape } from "./ops/shape.js";
import { ssdScanChunked } from "./ops/ssd-scan-chunked.js";
import { stage1Loss, stage2Loss } from "./ops/stage-losses.js";
import { swiglu } from "./ops/swiglu.js";
import { exp, neg, negExp, sigmoid } from "./ops/unary.js";
import { gpuNoGrad, releaseUnkept } from "./tape.js";

/** The model's ops on `ctx`'s device, with the decode kernels (decode-ops.ts). */
export function gpuModelOps(
  ctx: GpuContext,
): ModelOps<GpuTensor, GpuTensor> & DecodeOps<GpuTensor, GpuTensor> {
  return {
    ...gpuDecodeOps(),
    upload: (data, shape, opts = {}) => uploadTensor(ctx, data, shape, opts),
    // (the values stay known on the host: the decode kernels check their rows against them)
    uploadInt: (data, shape) => rememberInts(uploadTensor(ctx, data, shape), data),
    read: (t) => t.read(),
    write: (t, data) => {
      forgetInts(t);
      t.write(data);
    },
    dispose: (t) => t.dispose(),
    shapeOf: (t) => t.shape,
    noGrad: gpuNoGrad,
    releaseTransients: (keep) => releaseTransients(ctx, keep),
    embedding,
    rmsnorm,
    add,
    linear: (x, w) => linear(x, w),
    linearSplit,
    linears: linearMulti,
    reshape: (x, shape) => reshape(x, [...shape]),
    done: releaseUnkept,
    exp,
    neg,
    sigmoid,
    crossEntropy,
    causalConv1dSiluSplit,
    softplusBias,
    negExp,
    ssdScanChunked,
    gatedRmsnorm,
    projectedAttention(u, wq, wk, wv, opts) {
      const { nHeads: Hq, nKvHeads: Hkv } = opts;
      const [B, T] = u.shape as [number, number, number];
      const hd = wq.shape[0]! / Hq;
      const ropeOpts = opts.rope ?? {};
      // q, k and v as one GEMM each way, q and k rotated by one dispatch each way
      const [uq, uk, uv] = linearMulti(u, [wq, wk, wv]) as [GpuTensor, GpuTensor, GpuTensor];
      const [q, k] = ropePair(reshape(uq, [B, T, Hq, hd]), reshape(uk, [B, T, Hkv, hd]), ropeOpts);
      const v = reshape(uv, [B, T, Hkv, hd]);
      return reshape(attention(q, k, v, { seqIdx: opts.seqIdx ?? null }), [B, T, Hq * hd]);
    },
    swiglu,
    gateLogits,
    exitPdf,
    stage1Loss,
    stage2Loss,
  };
}
