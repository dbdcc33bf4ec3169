/*
 * `ModelOps` (@loop/tensor) on a CUDA context — the kernels only: the model, the exit gate's ops
 * and objectives, projected attention and cross-entropy are written once over them above the
 * backend, and autograd is @loop/tensor's `deviceAutograd` over the context's tape (autograd.ts).
 * Float and index tensors are both `CudaTensor` (f32 and i32). Every kernel records its backward
 * on the context's tape.
 */
import type { DecodeOps, ModelOps } from "@loop/tensor";
import type { CudaContext } from "./context.js";
import { CudaTensor } from "./cuda-tensor.js";
import { attention, ropeAll, swiglu } from "./ops/attention-ops.js";
import { affine, binary } from "./ops/binary-ops.js";
import { cudaDecodeOps } from "./ops/decode-ops.js";
import { ceRows, maskedMean } from "./ops/loss-ops.js";
import {
  causalConv1dSiluSplit,
  gatedRmsnorm,
  softplusBias,
  ssdScanChunked,
} from "./ops/mamba2-ops.js";
import { concat, split } from "./ops/split-ops.js";
import { embedding, linear, linearSplit, reshape, rmsnorm } from "./ops/tensor-ops.js";
import { unary } from "./ops/unary-ops.js";

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
    releaseTransients: (keep) => ctx.releaseTransients(keep),
    embedding: (ids, w) => embedding(ctx, ids, w),
    rmsnorm: (x, w, eps) => rmsnorm(ctx, x, w, eps),
    linear: (x, w) => linear(ctx, x, w),
    linearSplit: (x, w, widths) => linearSplit(ctx, x, w, widths),
    reshape: (x, shape) => reshape(ctx, x, shape),
    unary: (kind, x) => unary(ctx, kind, x),
    binary: (kind, a, b) => binary(ctx, kind, a, b),
    affine: (x, s, c) => affine(ctx, x, s, c),
    split: (x, sizes, axis) => split(ctx, x, sizes, axis),
    concat: (xs, axis) => concat(ctx, xs, axis),
    ceRows: (logits, targets) => ceRows(ctx, logits, targets),
    maskedMean: (x, targets) => maskedMean(ctx, x, targets),
    causalConv1dSiluSplit: (x, w, b, init, widths, seqIdx) =>
      causalConv1dSiluSplit(ctx, x, w, b, init, widths, seqIdx),
    softplusBias: (raw, bias, limit) => softplusBias(ctx, raw, bias, limit),
    ssdScanChunked: (x, dt, A, B, C, opts) => ssdScanChunked(ctx, x, dt, A, B, C, opts),
    gatedRmsnorm: (y, z, w, groups, eps) => gatedRmsnorm(ctx, y, z, w, groups, eps),
    rope: (xs, opts) => ropeAll(ctx, xs, opts),
    attention: (q, k, v, opts) => attention(ctx, q, k, v, opts),
    swiglu: (gate, up) => swiglu(ctx, gate, up),
  };
}
