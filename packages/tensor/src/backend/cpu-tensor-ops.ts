/*
 * The CPU's transfers and general kernels as `ModelOps` slices: the engine's own ops, called as
 * they are (the numbers are the engine's, bit for bit). `@loop/looped` joins them with the
 * slices of the mixers into `cpuBackendOps`.
 */
import { add, mul, scale, sub } from "../ops/binary.js";
import { embedding } from "../ops/embedding.js";
import { linearSplit } from "../ops/linear-split.js";
import { crossEntropyPerToken, maskedMean } from "../ops/loss.js";
import { linear } from "../ops/matmul.js";
import { rmsnorm } from "../ops/rmsnorm.js";
import { concat, concatLeading, reshape, split, splitLeading } from "../ops/shape.js";
import { exp, logsigmoid, neg, relu, sigmoid } from "../ops/unary.js";
import { IntTensor, Tensor } from "../tensor.js";
import type { BinaryKind, TensorOps, TransferOps, UnaryKind } from "./model-ops.js";

/** Upload, download and overwrite of CPU tensors (copies), the CPU's `TransferOps`. */
export const cpuTransferOps: TransferOps<Tensor, IntTensor> = {
  upload(data, shape, opts = {}) {
    return new Tensor(data.slice(), [...shape], opts.requiresGrad ?? false);
  },
  uploadInt: (data, shape) => new IntTensor(data.slice(), [...shape]),
  read: async (t) => t.data.slice(),
  write(t, data) {
    if (data.length !== t.size)
      throw new Error(`write: ${data.length} values into a tensor of ${t.size}`);
    t.data.set(data);
  },
  dispose() {}, // garbage-collected
  shapeOf: (t) => t.shape,
  releaseTransients() {},
};

const UNARY: Record<UnaryKind, (x: Tensor) => Tensor> = {
  exp,
  neg,
  sigmoid,
  logsigmoid,
  relu,
  negExp: (x) => neg(exp(x)),
};
const BINARY: Record<BinaryKind, (a: Tensor, b: Tensor) => Tensor> = { add, sub, mul };

/** The general kernels (embedding, RMSNorm, linear, elementwise, …) on CPU tensors. */
export const cpuTensorOps: TensorOps<Tensor, IntTensor> = {
  embedding,
  rmsnorm,
  linear: (x, w) => linear(x, w),
  // the CPU's GEMM writes the pieces directly (one definition: split(linear(x, w)))
  linearSplit,
  reshape: (x, shape) => reshape(x, [...shape]),
  unary: (kind, x) => UNARY[kind](x),
  binary: (kind, a, b) => BINARY[kind](a, b),
  affine: (x, s, c) => scale(x, s, c),
  split: (x, sizes, axis) => (axis === 0 ? splitLeading(x, sizes) : split(x, sizes)),
  concat: (xs, axis) => (axis === 0 ? concatLeading(xs) : concat(xs)),
  ceRows: crossEntropyPerToken,
  maskedMean,
};
