/*
 * `TrainOps` of the CPU: tensors are `Tensor` (gradients in `Tensor.grad`), index tensors
 * `IntTensor`; every op runs at once and `read` resolves with a copy. The CPU `AdamW` and the CPU
 * `Trainer`'s step (@loop/train's `encodeStep`) run on these ops. The gradient norm is summed in
 * double; its tensor holds it rounded to float32, and clipping scales by the double
 * (`exactNorm`), so that the CPU's clipping keeps its bits.
 */
import { backward } from "../autograd/backward.js";
import { releaseGrads } from "../autograd/leaf-grad.js";
import { noGrad } from "../autograd/node.js";
import { adamwUpdate } from "../optim/adamw-update.js";
import { normOfGrads, scaleGradsToNorm } from "../optim/clip.js";
import { type IntTensor, Tensor } from "../tensor.js";
import type { AutogradOps } from "./autograd-ops.js";
import type { StepOps } from "./backend-ops.js";
import { cpuTensorOps, cpuTransferOps } from "./cpu-tensor-ops.js";

function gradOf(t: Tensor): Float32Array {
  if (!t.grad) throw new Error("cpu train ops: a parameter without a gradient");
  return t.grad;
}

/** The double behind each norm tensor `gradNorm` made (a tensor holds float32). */
const doubles = new WeakMap<Tensor, number>();

/** The gradient norm a tensor from `cpuTrainOps.gradNorm` holds, in double. */
export const exactNorm = (t: Tensor): number => doubles.get(t) ?? t.data[0]!;

/**
 * The CPU's autograd (`AutogradOps`): its tensors' own tape (@loop/tensor's `backward`,
 * `noGrad`); clipping scales by the double norm (`exactNorm`). Checkpointing is the CPU model's
 * own (`LoopedModel.forward`).
 */
export const cpuAutograd: AutogradOps<Tensor> = {
  noGrad,
  backward: (loss, weight) => backward(loss, [Float32Array.of(weight)]),
  setTrainable: (t, on) => {
    t.requiresGrad = on;
  },
  hasGrad: (t) => t.requiresGrad && t.grad !== null,
  zeroGrads: (params) => releaseGrads(params),
  readGrad: async (t) => (t.grad ? Float32Array.from(t.grad) : null),
  clipGrads: (params, norm, maxNorm) =>
    scaleGradsToNorm(params.map(gradOf), exactNorm(norm), maxNorm),
};

/** The CPU's `StepOps`: norms, the AdamW update, its autograd, a step report's two kernels. */
export const cpuTrainOps: StepOps<Tensor, IntTensor> = {
  ...cpuTransferOps,
  ...cpuAutograd,
  affine: cpuTensorOps.affine,
  concat: cpuTensorOps.concat,
  name: "cpu",
  gradNorm: (params) => {
    const n = normOfGrads(params.map(gradOf));
    const t = new Tensor(Float32Array.of(n), [1]);
    doubles.set(t, n);
    return t;
  },
  zeros: (shape) => new Tensor(new Float32Array(shape.reduce((a, b) => a * b, 1)), shape),
  adamw: (param, m, v, c) => adamwUpdate(param.data, gradOf(param), m.data, v.data, c),
};
