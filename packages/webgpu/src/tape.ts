/*
 * The GPU tape's recording half: ops record a node whose `backward` enqueues the kernels of
 * their gradient; nothing is read back. The walk back over the nodes is `backward.ts` (it needs
 * the elementwise ops, which themselves record here: kept apart so neither imports the other).
 */
import { emptyLike, type GpuNode, GpuTensor } from "./gpu-tensor.js";

let recording = true;

/** Whether GPU ops are being recorded on the GPU tape now. */
export function isGpuGradEnabled(): boolean {
  return recording;
}

/** Run `fn` with recording set to `on`, restoring the previous setting afterwards. */
function withRecording<T>(on: boolean, fn: () => T): T {
  const was = recording;
  recording = on;
  try {
    return fn();
  } finally {
    recording = was;
  }
}

/** Run `fn` without recording (inference). */
export function gpuNoGrad<T>(fn: () => T): T {
  return withRecording(false, fn);
}

/** Run `fn` recording (activation checkpointing's recompute, inside a backward). */
export function gpuWithGrad<T>(fn: () => T): T {
  return withRecording(true, fn);
}

/** Tensors (by the tensor owning the buffer) whose values a recorded backward reads. */
const kept = new WeakSet<GpuTensor>();
const owner = (t: GpuTensor): GpuTensor => t.base ?? t;

/**
 * Record `outputs` as produced from `inputs` by an op whose gradient `backward` enqueues. Does
 * nothing (and the outputs need no gradient) when no input requires one or recording is off;
 * returns whether it recorded. `keeps`: the inputs and outputs whose values the backward reads
 * (default all of them); a tensor no recorded backward reads may be freed once the forward is
 * done with it (`releaseUnkept`).
 */
export function recordGpu(
  name: string,
  inputs: readonly GpuTensor[],
  outputs: GpuTensor[],
  backward: GpuNode["backward"],
  keeps: readonly GpuTensor[] = [...inputs, ...outputs],
): boolean {
  if (!recording || !inputs.some((t) => t.requiresGrad)) return false;
  const node: GpuNode = { name, inputs, outputs, backward };
  for (const o of outputs) {
    o.requiresGrad = true;
    o.node = node;
  }
  for (const t of keeps) kept.add(owner(t));
  return true;
}

/**
 * The forward will not read `t` again: free its buffer now when no recorded backward reads it
 * (a norm's output that only a mixed-precision projection read, which kept its own f16 copy).
 * The tape still routes gradients through `t` (a tensor is a key, not its buffer).
 */
export function releaseUnkept(t: GpuTensor): void {
  if (!recording || t.persistent || t.base || kept.has(t) || !t.node) return;
  t.freeStorage();
}

/**
 * Where an op's backward writes the gradient of one of its inputs: `out`, overwritten
 * (`accumulate` false) or added to (`accumulate` true: GEMM beta 1, a kernel's `acc` flag).
 */
export interface GradTarget {
  out: GpuTensor;
  accumulate: boolean;
}

let activeSink: ((t: GpuTensor) => GradTarget) | null = null;

/**
 * The gradient target of input `t` of the op whose backward is running: during `backwardGpu`,
 * a leaf's persistent gradient (added to once it exists) or the partial sum of an intermediate
 * the tape holds and no one else reads (added to in place); otherwise a fresh tensor. An op that
 * asks for a target must write the whole gradient there and return `out` as `t`'s gradient: the
 * tape then has nothing left to add (no separate accumulation dispatch).
 */
export function gradTarget(t: GpuTensor): GradTarget {
  if (activeSink) return activeSink(t);
  return { out: new GpuTensor(t.ctx, t.shape), accumulate: false };
}

/**
 * The gradients of `inputs` as fresh tensors of their shapes, each written by `write`; null
 * where an input needs none.
 */
export function freshGrads(
  inputs: readonly GpuTensor[],
  write: (gx: GpuTensor, x: GpuTensor, i: number) => void,
): (GpuTensor | null)[] {
  return inputs.map((x, i) => {
    if (!x.requiresGrad) return null;
    const gx = emptyLike(x.ctx, x.shape);
    write(gx, x, i);
    return gx;
  });
}

/** Run `fn` (one backward walk) with `sink` answering `gradTarget`. */
export function withGradSink<T>(sink: (t: GpuTensor) => GradTarget, fn: () => T): T {
  const was = activeSink;
  activeSink = sink;
  try {
    return fn();
  } finally {
    activeSink = was;
  }
}
