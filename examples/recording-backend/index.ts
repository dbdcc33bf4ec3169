/**
 * A compute backend from outside the workspace that implements only the kernel set, like
 * PyTorch's open-registration test backend: its tensors are its own (`HostTensor`: host arrays,
 * "device" memory to the code above it), its autograd is @loop/tensor's `deviceAutograd` over a
 * `DeviceTape` of its own, and each kernel is the CPU's kernel of the same name, recorded on that
 * tape and counted (`calls()`). The model, its losses, the exit gate, training and decoding come
 * from the packages above the contract (docs/backends.md).
 *
 * Check it: `pnpm looplm check --backend-module examples/recording-backend/index.ts --size small`.
 */

import {
  type BackendCapabilities,
  cpuTrainOps,
  decodeCapability,
  fusedComposites,
  type Precision,
  Tensor,
} from "@loop/tensor";
import { currentKernels } from "@loop/tensor/kernel";
import { calls, count, delegate, type Kernels } from "./delegate.js";
import { autograd, HostTensor } from "./host-tensor.js";

export { calls };

const float = (data: Float32Array, shape: readonly number[], persistent = false) =>
  new HostTensor(data, shape, persistent);

/** A CPU tensor over t's array holding its (clipped) gradient, for the CPU's optimiser kernels. */
function withGrad(t: HostTensor): Tensor {
  const c = new Tensor(t.data as Float32Array, t.shape, true);
  c.grad = autograd.gradOf(t).data as Float32Array;
  return c;
}
const cpuOf = (t: HostTensor) => new Tensor(t.data as Float32Array, t.shape);

/**
 * The kernel set: the transfers on host arrays, each model and decode kernel the CPU's (one line
 * each), the optimiser's kernels on the gradients the autograd holds.
 */
const kernels: Kernels = {
  // transfers: host arrays in and out
  upload: (data, shape, o = {}) => {
    const t = float(data.slice(), shape, o.persistent);
    t.requiresGrad = o.requiresGrad ?? false;
    return t;
  },
  uploadInt: (data, shape) => new HostTensor(data.slice(), shape),
  read: async (t) => Float32Array.from(t.data),
  write: (t, data) => {
    if (data.length !== t.size) throw new Error(`write: ${data.length} values into ${t.size}`);
    t.data.set(data);
  },
  dispose: (t) => {
    t.released = true;
  },
  shapeOf: (t) => t.shape,
  releaseTransients: () => {},
  // the model's kernels
  embedding: delegate("embedding"),
  rmsnorm: delegate("rmsnorm"),
  linear: delegate("linear"),
  reshape: delegate("reshape"),
  unary: delegate("unary"),
  binary: delegate("binary"),
  affine: delegate("affine"),
  split: delegate("split"),
  concat: delegate("concat"),
  ceRows: delegate("ceRows"),
  maskedMean: delegate("maskedMean"),
  causalConv1dSiluSplit: delegate("causalConv1dSiluSplit"),
  softplusBias: delegate("softplusBias"),
  ssdScanChunked: delegate("ssdScanChunked"),
  gatedRmsnorm: delegate("gatedRmsnorm"),
  rope: delegate("rope"),
  attention: delegate("attention"),
  swiglu: delegate("swiglu"),
  // the decode kernels (optional: without them decoding recomputes the sequence per token)
  mamba2Step: delegate("mamba2Step"),
  attendStep: delegate("attendStep"),
  // the optimiser's kernels, on the gradients the autograd holds
  name: "recording",
  gradNorm: (params) => {
    count("gradNorm");
    const norm = cpuTrainOps.gradNorm(params.map(withGrad));
    return float(norm.data, [1]);
  },
  zeros: (shape) => float(new Float32Array(shape.reduce((a, b) => a * b, 1)), shape, true),
  adamw: (param, m, v, c) => {
    count("adamw");
    cpuTrainOps.adamw(withGrad(param), cpuOf(m), cpuOf(v), c);
  },
};

/** The backend's ops: its kernels and the shared autograd. */
export const ops = { ...kernels, ...autograd };

/** What it has, derived from its ops. */
export const caps: BackendCapabilities = {
  memory: "device",
  precisions: ["fp32"],
  decode: decodeCapability(ops),
  train: { customMixers: false },
  fused: fusedComposites(ops),
  features: [],
  gemm: "the CPU's kernels, recorded",
};

/** Start the backend (what `looplm check --backend-module` calls). */
export default function start() {
  return {
    name: "recording",
    caps,
    ops,
    opsAt(p: Precision) {
      if (p !== "fp32") throw new Error(`recording: fp32 only, not ${p}`);
      return ops;
    },
    kernels: currentKernels(),
    stop() {},
  };
}
