/*
 * Reverse-mode sweep over the recorded graph. Gradients of a tensor used several times (every
 * weight of a looped model is used R times) are summed.
 */
import type { Tensor } from "../tensor.js";
import { GradStore } from "./grad-store.js";
import { addLeafGrad } from "./leaf-grad.js";
import type { GradNode } from "./node.js";

function topoOrder(roots: readonly Tensor[]): GradNode[] {
  const order: GradNode[] = [];
  const seen = new Set<GradNode>();
  // Iterative DFS: looped models build graphs deep enough to overflow a recursive walk.
  const stack: { node: GradNode; next: number }[] = [];
  for (const r of roots) {
    if (r.node && !seen.has(r.node)) {
      seen.add(r.node);
      stack.push({ node: r.node, next: 0 });
    }
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.next < top.node.inputs.length) {
        const inp = top.node.inputs[top.next++]!;
        const n = inp.node;
        if (n && inp.requiresGrad && !seen.has(n)) {
          seen.add(n);
          stack.push({ node: n, next: 0 });
        }
      } else {
        order.push(top.node);
        stack.pop();
      }
    }
  }
  return order;
}

/** Options of `backward`: whether to keep the graph for another backward. */
export interface BackwardOptions {
  /** Keep the graph (saved activations) alive for another backward. Default false. */
  retainGraph?: boolean;
}

/**
 * Back-propagate from `roots` (each with seed gradient `seeds[i]`, default all ones) and add the
 * gradients of every leaf that requires one into `leaf.grad`.
 */
export function backward(
  roots: Tensor | readonly Tensor[],
  seeds?: readonly Float32Array[],
  options: BackwardOptions = {},
): void {
  const rs = Array.isArray(roots) ? (roots as readonly Tensor[]) : [roots as Tensor];
  const grads = new GradStore();
  rs.forEach((r, i) => {
    if (!r.requiresGrad)
      throw new Error("backward: root does not require grad (no parameter reaches it)");
    const seed = seeds?.[i] ?? new Float32Array(r.size).fill(1);
    if (seed.length !== r.size) {
      throw new Error(`backward: seed ${i} has ${seed.length} elements, root has ${r.size}`);
    }
    if (r.node) grads.accumulateReadOnly(r, seed);
    else addLeafGrad(r, seed);
  });
  const order = topoOrder(rs);
  for (let k = order.length - 1; k >= 0; k--) {
    const node = order[k]!;
    const outs = node.outputs;
    const gys = outs.map((t) => grads.take(t));
    if (gys.every((g) => g === null)) continue;
    if (node.backward === null) {
      throw new Error(
        `backward: the graph through op ${node.op} was already freed (pass retainGraph: true to backward twice)`,
      );
    }
    const needs = node.inputs.map((t) => t.requiresGrad);
    const gxs = node.backward(gys, needs);
    node.inputs.forEach((inp, j) => {
      const g = gxs[j];
      if (!needs[j] || g == null) return;
      if (g.length !== inp.size) {
        throw new Error(
          `backward: op ${node.op} returned ${g.length} grads for input ${j} of size ${inp.size}`,
        );
      }
      if (inp.node) grads.accumulate(inp, g);
      else addLeafGrad(inp, g);
    });
    if (!options.retainGraph) node.backward = null;
  }
}

/**
 * Gradient of the scalar `lossFn()` with respect to `params`. Leaves' `.grad` is left as it was;
 * returns the loss value and one gradient array per parameter (zeros when unreachable).
 */
export function grad(
  lossFn: () => Tensor,
  params: readonly Tensor[],
): { loss: number; grads: Float32Array[] } {
  const saved = params.map((p) => p.grad);
  params.forEach((p) => {
    p.grad = null;
  });
  try {
    const loss = lossFn();
    if (loss.size !== 1) throw new Error(`grad: loss must have one element, got ${loss.size}`);
    if (loss.requiresGrad) backward(loss);
    return { loss: loss.item(), grads: params.map((p) => p.grad ?? new Float32Array(p.size)) };
  } finally {
    params.forEach((p, i) => {
      p.grad = saved[i]!;
    });
  }
}
