/*
 * Activation checkpointing on the GPU (the CPU's is @loop/tensor's `checkpoint`): `fn(x)` runs
 * without recording and its intermediate tensors go back to the pool at once, keeping only the
 * output; the backward runs `fn` again on x with recording on and backpropagates through that
 * copy. Memory: one tensor per wrapped call (a loop step's output) instead of every activation
 * inside it, for one extra forward of `fn`. The parameters' gradients accumulate straight into
 * their persistent `grad` (as an unwrapped walk does); x's gradient goes back to the outer walk.
 */
import { backwardGpu } from "./backward.js";
import { GpuTensor, nextTensorId, releaseTransientsSince } from "./gpu-tensor.js";
import { gpuNoGrad, gpuWithGrad, isGpuGradEnabled, recordGpu } from "./tape.js";

/** Whether a walk inside a checkpoint frees as it goes (set by the outer walk's option). */
let releaseInside = true;

/** Run `fn` with the checkpoints' inner backward walks freeing (or not) as they go. */
export function withCheckpointRelease<R>(on: boolean, fn: () => R): R {
  const was = releaseInside;
  releaseInside = on;
  try {
    return fn();
  } finally {
    releaseInside = was;
  }
}

/**
 * Activation checkpointing on the GPU tape: fn(x) recorded without its activations and recomputed
 * in the backward pass.
 */
export function gpuCheckpoint(
  fn: (x: GpuTensor) => GpuTensor,
  x: GpuTensor,
  params: readonly GpuTensor[],
): GpuTensor {
  const inputs = [x, ...params];
  if (!isGpuGradEnabled() || !inputs.some((t) => t.requiresGrad)) return fn(x);
  const ctx = x.ctx;
  const first = nextTensorId();
  const y = gpuNoGrad(() => fn(x));
  releaseTransientsSince(ctx, first, [y]);
  // The output is the node's: a view would share its base's buffer with nothing recorded.
  recordGpu("checkpoint", inputs, [y], ([g]) => {
    // A leaf standing for x: the recomputed graph ends at it, its gradient is returned.
    const xin = new GpuTensor(ctx, x.shape, { viewOf: x });
    xin.requiresGrad = x.requiresGrad;
    const yr = gpuWithGrad(() => fn(xin));
    if (!yr.requiresGrad) return inputs.map(() => null);
    const [gx] = backwardGpu(yr, g!, { release: releaseInside, wrt: [xin] });
    return [x.requiresGrad ? (gx ?? null) : null, ...params.map(() => null)];
  });
  return y;
}
