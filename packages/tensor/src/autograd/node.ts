/*
 * Tape autograd at the granularity of fused ops. Every op records one GradNode holding its
 * inputs, its outputs and a hand-written backward that maps output gradients to input
 * gradients. `backward()` walks the nodes in reverse topological order.
 */
import { type Shape, Tensor } from "../tensor.js";

/**
 * Backward of a fused op. `gys[i]` is the gradient of output i (null when nothing downstream
 * needs it); `needs[j]` says whether input j wants a gradient. Return one gradient per input,
 * null where not needed. `gys` are read-only (they may be shared with other gradients); a
 * backward may return one of them, or one array for several inputs, and the engine copies before
 * it ever adds into a shared array.
 */
export type BackwardFn = (
  gys: readonly (Float32Array | null)[],
  needs: readonly boolean[],
) => readonly (Float32Array | null)[];

/**
 * One recorded op of the tape: its name, inputs, outputs and the function that maps output
 * gradients to input gradients.
 */
export interface GradNode {
  readonly op: string;
  readonly inputs: readonly Tensor[];
  readonly outputs: readonly Tensor[];
  backward: BackwardFn | null;
}

let gradEnabled = true;

/** Whether ops currently record onto the tape. */
export function isGradEnabled(): boolean {
  return gradEnabled;
}

/** Run `fn` with recording switched to `on`, restoring the previous mode afterwards. */
function withGrad<T>(on: boolean, fn: () => T): T {
  const prev = gradEnabled;
  gradEnabled = on;
  try {
    return fn();
  } finally {
    gradEnabled = prev;
  }
}

/** Run `fn` without recording: inference mode, nothing is kept for a backward pass. */
export function noGrad<T>(fn: () => T): T {
  return withGrad(false, fn);
}

/** Run `fn` with recording on (e.g. inside an outer noGrad). */
export function enableGrad<T>(fn: () => T): T {
  return withGrad(true, fn);
}

/**
 * Wrap freshly computed output buffers as tensors and, when any input requires a gradient and
 * recording is on, attach a node with `backward`. `backward` is only called if needed.
 */
export function record(
  op: string,
  inputs: readonly Tensor[],
  outputs: readonly { data: Float32Array; shape: Shape }[],
  backward: BackwardFn,
): Tensor[] {
  const track = gradEnabled && inputs.some((t) => t.requiresGrad);
  const outs = outputs.map((o) => new Tensor(o.data, o.shape, track));
  if (track) {
    const node: GradNode = { op, inputs, outputs: outs, backward };
    outs.forEach((t, i) => {
      t.node = node;
      t.outputIndex = i;
    });
  }
  return outs;
}

/** Single-output convenience over `record`. */
export function record1(
  op: string,
  inputs: readonly Tensor[],
  data: Float32Array,
  shape: Shape,
  backward: BackwardFn,
): Tensor {
  return record(op, inputs, [{ data, shape }], backward)[0]!;
}
