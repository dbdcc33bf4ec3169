/*
 * Detach and freeze. `detach(x)` is a tensor sharing `x`'s storage with requiresGrad = false and
 * no graph node, so ops fed with it record no path back to whatever produced `x` (stage 2 feeds
 * the gate detached readouts this way). `freeze` sets requiresGrad = false on parameters: the tape
 * then neither records gradient paths into them nor computes their gradients, and an optimizer
 * skips them (requiresGrad false, grad null). `unfreeze` turns them back on.
 */
import { type NamedParameter, Tensor } from "@loop/tensor";

/** A tensor sharing `x`'s data and name with no gradient and no tape history (a stop-gradient). */
export function detach(x: Tensor): Tensor {
  const t = new Tensor(x.data, x.shape, false);
  t.name = x.name;
  return t;
}

function tensorsOf(params: readonly (Tensor | NamedParameter)[]): Tensor[] {
  return params.map((p) => (p instanceof Tensor ? p : p.tensor));
}

/** Stop training `params` (their stale gradients are dropped too). */
export function freeze(params: readonly (Tensor | NamedParameter)[]): void {
  for (const t of tensorsOf(params)) {
    t.requiresGrad = false;
    t.grad = null;
  }
}

/** Train `params` again. */
export function unfreeze(params: readonly (Tensor | NamedParameter)[]): void {
  for (const t of tensorsOf(params)) {
    if (t.node !== null) {
      throw new Error(
        `unfreeze: params contains ${t.name ?? "a tensor"} computed by op ${t.node.op}, expected leaves`,
      );
    }
    t.requiresGrad = true;
  }
}
