/*
 * `ModelOps` (@loop/tensor) on a WebGPU device: the backend contract's kernels as this
 * package's WGSL ops, for the model written once in @loop/looped (`toDevice`). Float and index
 * tensors are both `GpuTensor` (f32 and i32). Nothing here is model logic: cross-entropy,
 * projected attention and the exit gate's ops are written once over these kernels above the
 * backends, and so is autograd (gpu-autograd.ts). Every op records its backward on the GPU tape
 * (tape.ts).
 */
import { BINARY_KINDS, type DecodeOps, type ModelOps, UNARY_KINDS } from "@loop/tensor";
import { gpuDecodeOps } from "./decode-ops.js";
import type { GpuContext } from "./gpu-context.js";
import { type GpuTensor, releaseTransients, uploadTensor } from "./gpu-tensor.js";
import { forgetInts, rememberInts } from "./host-ints.js";
import { attention } from "./ops/attention.js";
import { binaryOp } from "./ops/binary.js";
import { causalConv1dSiluSplit } from "./ops/conv-silu-split.js";
import { crossEntropyPerToken } from "./ops/cross-entropy.js";
import { affine } from "./ops/elementwise.js";
import { embedding } from "./ops/embedding.js";
import { gatedRmsnorm } from "./ops/gated-rmsnorm.js";
import { linearMulti } from "./ops/linear-multi.js";
import { linearSplit } from "./ops/linear-split.js";
import { softplusBias } from "./ops/mamba2-ops.js";
import { maskedMean } from "./ops/masked-mean.js";
import { linear } from "./ops/matmul.js";
import { rmsnorm } from "./ops/rmsnorm.js";
import { ropeEach } from "./ops/rope.js";
import { concat, concatLeading, reshape, split, splitLeading } from "./ops/shape.js";
import { ssdScanChunked } from "./ops/ssd-scan-chunked.js";
import { swiglu } from "./ops/swiglu.js";
import { unary } from "./ops/unary.js";
import { releaseUnkept } from "./tape.js";

/** Refuse a kind outside `kinds` by name (the kernels' tables would fail less clearly). */
function checkKind(op: string, kind: string, kinds: readonly string[]): void {
  if (!kinds.includes(kind))
    throw new Error(`webgpu ${op}: unknown kind "${kind}" (${kinds.join(", ")})`);
}

function checkAxis(op: string, axis: number): void {
  if (axis !== 0 && axis !== -1) throw new Error(`webgpu ${op}: axis must be 0 or -1, got ${axis}`);
}

/** The model's kernels on `ctx`'s device, with the decode kernels (decode-ops.ts). */
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
    releaseTransients: (keep) => releaseTransients(ctx, keep),
    embedding,
    rmsnorm,
    linear: (x, w) => linear(x, w),
    // Fused composites (their definitions are written once above the backends). linears: the
    // weights as one GEMM each way (q, k, v: three launches become one, and the input is read
    // once). linearSplit — split(linear(x, w), widths, -1) — writes each piece where it lives
    // and reads the pieces' gradients in place (ops/linear-split.ts): no [.., out] product
    // block and no copy into the pieces forward or back, which is the Mamba-2 in_proj's
    // largest activation.
    linears: linearMulti,
    linearSplit,
    reshape: (x, shape) => reshape(x, [...shape]),
    done: releaseUnkept,
    unary: (kind, x) => {
      checkKind("unary", kind, UNARY_KINDS);
      return unary(kind, x);
    },
    binary: (kind, a, b) => {
      checkKind("binary", kind, BINARY_KINDS);
      return binaryOp(kind, a, b);
    },
    affine,
    split: (x, sizes, axis) => {
      checkAxis("split", axis);
      return axis === 0 ? splitLeading(x, sizes) : split(x, sizes);
    },
    concat: (xs, axis) => {
      checkAxis("concat", axis);
      return axis === 0 ? concatLeading(xs) : concat(xs);
    },
    ceRows: crossEntropyPerToken,
    maskedMean,
    causalConv1dSiluSplit,
    softplusBias,
    ssdScanChunked,
    gatedRmsnorm,
    rope: ropeEach,
    attention: (q, k, v, opts) => attention(q, k, v, { seqIdx: opts.seqIdx ?? null }),
    swiglu,
  };
}
