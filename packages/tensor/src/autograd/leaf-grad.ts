/*
 * Leaf gradients (`Tensor.grad`) live outside scratch scopes and persist across steps. Allocating
 * them fresh every step touches new pages each time (slow here), so `releaseGrads` keeps each
 * released buffer as the tensor's spare, and the next backward writes into it instead.
 */
import { computeSame } from "../ops/binary.js";
import type { Tensor } from "../tensor.js";

const spare = new WeakMap<Tensor, Float32Array>();

/**
 * Clear the gradients of `params` (grad = null, as `zeroGrad`) and keep their buffers for reuse
 * by the next backward: an array previously read from `.grad` may then be overwritten, so call
 * this only where nothing holds on to old gradients (a training loop between steps).
 */
export function releaseGrads(params: readonly (Tensor | { tensor: Tensor })[]): void {
  for (const p of params) {
    const t = "tensor" in p ? p.tensor : p;
    if (t.grad !== null && t.grad.length === t.size) spare.set(t, t.grad);
    t.grad = null;
  }
}

/** t.grad += g (t.grad = copy of g when it has none). */
export function addLeafGrad(t: Tensor, g: Float32Array): void {
  const a = t.grad;
  if (a === null) {
    const buf = spare.get(t);
    if (buf !== undefined) spare.delete(t);
    const fresh = buf ?? new Float32Array(t.size);
    fresh.set(g);
    t.grad = fresh;
    return;
  }
  computeSame("add", a, g, a);
}
