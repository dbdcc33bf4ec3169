/**
 * The GPU tape's recording half: ops record a node whose `backward` enqueues the kernels of
 * their gradient; nothing is read back. The walk back over the nodes is `backward.ts` (it needs
 * the elementwise ops, which themselves record here: kept apart so neither imports the other).
 */
import type { GpuNode, GpuTensor } from "./gpu-tensor.js";

let recording = true;

export function isGpuGradEnabled(): boolean {
  return recording;
}

/** Run `fn` without recording (inference). */
export function gpuNoGrad<T>(fn: () => T): T {
  const was = recording;
  recording = false;
  try {
    return fn();
  } finally {
    recording = was;
  }
}

/** Run `fn` recording (activation checkpointing's recompute, inside a backward). */
export function gpuWithGrad<T>(fn: () => T): T {
  const was = recording;
  recording = true;
  try {
    return fn();
  } finally {
    recording = was;
  }
}

/**
 * Record `outputs` as produced from `inputs` by an op whose gradient `backward` enqueues. Does
 * nothing (and the outputs need no gradient) when no input requires one or recording is off.
 */
export function recordGpu(
  name: string,
  inputs: readonly GpuTensor[],
  outputs: GpuTensor[],
  backward: GpuNode["backward"],
): void {
  if (!recording || !inputs.some((t) => t.requiresGrad)) return;
  const node: GpuNode = { name, inputs, outputs, backward };
  for (const o of outputs) {
    o.requiresGrad = true;
    o.node = node;
  }
}
