/*
 * The CPU's transfers and general ops as `ModelOps` slices: the engine's own ops, called as they
 * are (the numbers are the engine's, bit for bit). `@loop/looped` joins them with the slices of
 * the mixers and the exit gate into `cpuBackendOps`.
 */
import { noGrad } from "../autograd/node.js";
import { add } from "../ops/binary.js";
import { embedding } from "../ops/embedding.js";
import { linearSplit } from "../ops/linear-split.js";
import { crossEntropy } from "../ops/loss.js";
import { linear } from "../ops/matmul.js";
import { rmsnorm } from "../ops/rmsnorm.js";
import { reshape } from "../ops/shape.js";
import { exp, neg, sigmoid } from "../ops/unary.js";
import { IntTensor, Tensor } from "../tensor.js";
import type { TensorOps, TransferOps } from "./model-ops.js";

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
  noGrad,
  releaseTransients() {},
};

/**
 * The model's tensor ops (embedding, RMSNorm, linear, elementwise, losses, …) on CPU tensors, the
 * CPU's `TensorOps`.
 */
export const cpuTensorOps: TensorOps<Tensor, IntTensor> = {
  embedding,
  rmsnorm,
  add,
  linear: (x, w) => linear(x, w),
  linearSplit,
  reshape: (x, shape) => reshape(x, [...shape]),
  exp,
  neg,
  sigmoid,
  crossEntropy,
};
