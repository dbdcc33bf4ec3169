/**
 * `TrainOps` of the CPU: tensors are `Tensor` (gradients in `Tensor.grad`), index tensors
 * `IntTensor`; every op runs at once and `read` resolves with a copy. The CPU `AdamW` runs on
 * these ops; the CPU `Trainer` keeps its own synchronous step (its gradient norm stays in double),
 * which the generic step engine reproduces on these ops (packages/train device-step-engine.test).
 */
import { backward } from "../autograd/backward.js";
import { releaseGrads } from "../autograd/leaf-grad.js";
import { adamwUpdate } from "../optim/adamw-update.js";
import { normOfGrads, scaleGradsToNorm } from "../optim/clip.js";
import { type IntTensor, Tensor } from "../tensor.js";
import { cpuTransferOps } from "./cpu-tensor-ops.js";
import type { TrainOps } from "./train-ops.js";

function gradOf(t: Tensor): Float32Array {
  if (!t.grad) throw new Error("cpu train ops: a parameter without a gradient");
  return t.grad;
}

export const cpuTrainOps: TrainOps<Tensor, IntTensor> = {
  ...cpuTransferOps,
  name: "cpu",
  backward: (loss, weight) => backward(loss, [Float32Array.of(weight)]),
  setTrainable: (t, on) => {
    t.requiresGrad = on;
  },
  hasGrad: (t) => t.requiresGrad && t.grad !== null,
  zeroGrads: (params) => releaseGrads(params),
  readGrad: async (t) => (t.grad ? Float32Array.from(t.grad) : null),
  gradNorm: (params) => new Tensor(Float32Array.of(normOfGrads(params.map(gradOf))), [1]),
  clipGrads: (params, norm, maxNorm) =>
    scaleGradsToNorm(params.map(gradOf), norm.data[0]!, maxNorm),
  zeros: (shape) => new Tensor(new Float32Array(shape.reduce((a, b) => a * b, 1)), shape),
  scalars: (n) => new Tensor(new Float32Array(n), [n]),
  copyScalar: (src, dst, index) => {
    dst.data[index] = src.data[0]!;
  },
  adamw: (param, m, v, c) => adamwUpdate(param.data, gradOf(param), m.data, v.data, c),
};
