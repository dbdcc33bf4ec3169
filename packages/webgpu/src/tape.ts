/*
 * The GPU tape: @loop/tensor/kernel's `DeviceTape` over GPU tensors, one for the process (its
 * nodes hang on their outputs; a walk finds them from its root). Ops record a node whose
 * `backward` enqueues the kernels of their gradient; nothing is read back. A tensor no recorded
 * backward reads may be freed once the forward is done with it (`releaseUnkept`).
 */
import { DeviceTape } from "@loop/tensor/kernel";
import {
  emptyLike,
  type GpuNode,
  GpuTensor,
  nextTensorId,
  releaseTransientsSince,
} from "./gpu-tensor.js";
import { addInto, addTensors, copyTensor } from "./ops/elementwise-plain.js";

/** Tensors (by the tensor owning the buffer) whose values a recorded backward reads. */
const kept = new WeakSet<GpuTensor>();
const owner = (t: GpuTensor): GpuTensor => t.base ?? t;

/** The process's GPU tape (see the file comment). */
export const gpuTape = new DeviceTape<GpuTensor>({
  nextId: nextTensorId,
  empty: (like, persistent) => new GpuTensor(like.ctx, like.shape, { persistent }),
  copyInto: (dst, src) => copyTensor(src, dst),
  addInto,
  add: addTensors,
  dispose: (t) => t.dispose(),
  gathers: (t) => t.requiresGrad,
  releaseSince: (mark, keep, on) => releaseTransientsSince(on.ctx, mark, keep),
  keep: (t) => kept.add(owner(t)),
});

/** Whether GPU ops are being recorded on the GPU tape now. */
export function isGpuGradEnabled(): boolean {
  return gpuTape.recording;
}

/** Run `fn` without recording (inference). */
export function gpuNoGrad<T>(fn: () => T): T {
  return gpuTape.withRecording(false, fn);
}

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
  return gpuTape.record(name, inputs, outputs, backward, keeps) !== null;
}

/**
 * The forward will not read `t` again: free its buffer now when no recorded backward reads it
 * (a norm's output that only a mixed-precision projection read, which kept its own f16 copy).
 * The tape still routes gradients through `t` (a tensor is a key, not its buffer).
 */
export function releaseUnkept(t: GpuTensor): void {
  if (!gpuTape.recording || t.persistent || t.base || kept.has(t) || !t.node) return;
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

/**
 * The gradient target of input `t` of the op whose backward is running: a leaf's persistent
 * gradient (added to once it holds this step's), the running sum of an intermediate that the
 * walk holds in a block of its own (added to in place), otherwise a fresh tensor. An op that
 * asks for a target must write the whole gradient there and return `out` as `t`'s gradient:
 * the tape then has nothing left to add (no separate accumulation dispatch).
 */
export function gradTarget(t: GpuTensor): GradTarget {
  if (!t.requiresGrad) throw new Error("webgpu: gradTarget of a tensor that needs no gradient");
  // (outside a walk — an op's backward called directly — every gradient is fresh)
  const target = gpuTape.walking ? gpuTape.gradTarget(t) : null;
  if (target) return { out: target.out, accumulate: target.acc };
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
