/*
 * `ModelOps` (@loop/tensor) on a CUDA context: the model written once in @loop/looped runs on
 * it through `toDevice(model, cudaModelOps(ctx))`. Float and index tensors are both `CudaTensor`
 * (f32 and i32). Every op records its backward on the context's tape.
 */
import type { DecodeOps, ModelOps } from "@loop/tensor";
import { checkpoint } from "./checkpoint.js";
import type { CudaContext } from "./context.js";
import { CudaTensor } from "./cuda-tensor.js";
import { projectedAttention, swiglu } from "./ops/attention-ops.js";
import { cudaDecodeOps } from "./ops/decode-ops.js";
import { exitPdf, gateLogits, stage1Loss, stage2Loss } from "./ops/exit-gate-ops.js";
import {
  causalConv1dSiluSplit,
  gatedRmsnorm,
  negExp,
  softplusBias,
  ssdScanChunked,
} from "./ops/mamba2-ops.js";
import {
  add,
  crossEntropy,
  embedding,
  exp,
  linear,
  linearSplit,
  neg,
  reshape,
  rmsnorm,
  sigmoid,
} from "./ops/tensor-ops.js";

/** A tensor of `data` on `ctx` (a leaf; trainable when `requiresGrad`). */
export function uploadTensor(
  ctx: CudaContext,
  data: Float32Array,
  shape: readonly number[],
  opts: { persistent?: boolean; requiresGrad?: boolean } = {},
): CudaTensor {
  const t = new CudaTensor(ctx, shape, "f32", opts.persistent ?? false);
  if (data.length !== t.size)
    throw new Error(`cuda upload: ${data.length} values for shape [${shape}]`);
  ctx.device.upload(t.ptr, data);
  if (opts.requiresGrad) {
    t.requiresGrad = true;
    t.trainable = true;
  }
  return t;
}

/** The values of `t` on the host, once the work queued before has run. */
export async function readTensor(t: CudaTensor): Promise<Float32Array> {
  if (t.dtype !== "f32") throw new Error(`cuda read: a ${t.dtype} tensor`);
  const buf = await t.ctx.device.read(t.ptr, t.bytes);
  return new Float32Array(buf, 0, t.size);
}

/** The model's ops and the decode kernels on `ctx`'s device. */
export function cudaModelOps(
  ctx: CudaContext,
): ModelOps<CudaTensor, CudaTensor> & DecodeOps<CudaTensor, CudaTensor> {
  return {
    ...cudaDecodeOps(ctx),
    upload: (data, shape, opts = {}) => uploadTensor(ctx, data, shape, opts),
    uploadInt(data, shape) {
      const t = new CudaTensor(ctx, shape, "i32", false, null, 0, Int32Array.from(data));
      ctx.device.upload(t.ptr, data);
      return t;
    },
    read: readTensor,
    write(t, data) {
      if (data.length !== t.size)
        throw new Error(`cuda write: ${data.length} values for [${t.shape}]`);
      ctx.device.upload(t.ptr, data);
      t.version++;
    },
    dispose: (t) => ctx.dispose(t),
    shapeOf: (t) => t.shape,
    noGrad: (fn) => ctx.withRecording(false, fn),
    releaseTransients: (keep) => ctx.releaseTransients(keep),
    embedding: (ids, w) => embedding(ctx, ids, w),
    rmsnorm: (x, w, eps) => rmsnorm(ctx, x, w, eps),
    add: (a, b) => add(ctx, a, b),
    linear: (x, w) => linear(ctx, x, w),
    linearSplit: (x, w, widths) => linearSplit(ctx, x, w, widths),
    reshape: (x, shape) => reshape(ctx, x, shape),
    exp: (x) => exp(ctx, x),
    neg: (x) => neg(ctx, x),
    sigmoid: (x) => sigmoid(ctx, x),
    crossEntropy: (logits, targets) => crossEntropy(ctx, logits, targets),
    causalConv1dSiluSplit: (x, w, b, init, widths, seqIdx) =>
      causalConv1dSiluSplit(ctx, x, w, b, init, widths, seqIdx),
    softplusBias: (raw, bias, limit) => softplusBias(ctx, raw, bias, limit),
    negExp: (x) => negExp(ctx, x),
    ssdScanChunked: (x, dt, A, B, C, opts) => ssdScanChunked(ctx, x, dt, A, B, C, opts),
    gatedRmsnorm: (y, z, w, groups, eps) => gatedRmsnorm(ctx, y, z, w, groups, eps),
    projectedAttention: (u, wq, wk, wv, opts) => projectedAttention(ctx, u, wq, wk, wv, opts),
    swiglu: (gate, up) => swiglu(ctx, gate, up),
    gateLogits: (readouts, weight, bias) => gateLogits(ctx, readouts, weight, bias),
    exitPdf: (a) => exitPdf(ctx, a),
    stage1Loss: (a, logits, targets, opts) => stage1Loss(ctx, a, logits, targets, opts),
    stage2Loss: (gate, readouts, logits, targets, opts) =>
      stage2Loss(ctx, gate, readouts, logits, targets, opts),
    checkpoint: (fn, x, params) => checkpoint(ctx, fn, x, params),
  };
}
