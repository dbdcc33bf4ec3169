/**
 * Reverse-mode autograd on the GPU. `backwardGpu(loss)` walks the nodes ops recorded (`tape.ts`)
 * in reverse topological order and sums each tensor's incoming gradients on the device; leaves
 * that require a gradient accumulate it into their persistent `grad` (summed over every use, so
 * weights shared by R loop steps get the sum of their R contributions).
 */
import type { GpuContext } from "./gpu-context.js";
import { type GpuNode, GpuTensor } from "./gpu-tensor.js";
import { addInto, addTensors, copyTensor, fillTensor } from "./ops/elementwise.js";
import { gpuNoGrad } from "./tape.js";

function topoOrder(root: GpuTensor): GpuNode[] {
  const order: GpuNode[] = [];
  const seen = new Set<GpuNode>();
  // Iterative DFS: a looped model's tape is deep (R loop steps × N layers × ops).
  const stack: [GpuNode, number][] = [];
  if (root.node) stack.push([root.node, 0]);
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    const [node, i] = top;
    if (i === 0 && seen.has(node)) {
      stack.pop();
      continue;
    }
    seen.add(node);
    if (i < node.inputs.length) {
      top[1] = i + 1;
      const child = node.inputs[i]!.node;
      if (child && !seen.has(child)) stack.push([child, 0]);
    } else {
      stack.pop();
      order.push(node);
    }
  }
  return order;
}

/**
 * Backpropagate from `loss` (one element, or `seed` as its gradient). Leaf gradients accumulate
 * into `leaf.grad`; intermediate gradients are transient.
 */
export function backwardGpu(loss: GpuTensor, seed?: GpuTensor): void {
  const ctx: GpuContext = loss.ctx;
  if (!loss.requiresGrad) throw new Error("webgpu: backward of a tensor that needs no gradient");
  if (!seed && loss.size !== 1)
    throw new Error(
      `webgpu: backward needs a one-element loss or a seed, got ${loss.size} elements`,
    );
  const grads = new Map<GpuTensor, GpuTensor>();
  grads.set(loss, seed ?? fillTensor(ctx, loss.shape, 1));
  const accumulate = (t: GpuTensor, g: GpuTensor) => {
    if (!t.requiresGrad) return;
    if (!t.node) {
      // A leaf: its persistent gradient buffer sums every use.
      if (t.grad) addInto(t.grad, g);
      else {
        const leafGrad = new GpuTensor(ctx, t.shape, { persistent: true });
        copyTensor(g, leafGrad);
        t.grad = leafGrad;
      }
      return;
    }
    // Never add in place: an op's backward may hand the same tensor to several inputs.
    const prev = grads.get(t);
    grads.set(t, prev ? addTensors(prev, g) : g);
  };
  if (!loss.node) {
    accumulate(loss, grads.get(loss)!);
    return;
  }
  const order = topoOrder(loss);
  for (let k = order.length - 1; k >= 0; k--) {
    const node = order[k]!;
    const gOut = node.outputs.map((o) => grads.get(o) ?? null);
    if (gOut.every((g) => g === null)) continue;
    const gIn = gpuNoGrad(() => node.backward(gOut));
    node.inputs.forEach((t, i) => {
      const g = gIn[i];
      if (g) accumulate(t, g);
    });
  }
}

/** Zero (drop) the gradients of `params` before the next step. */
export function zeroGpuGrads(params: readonly GpuTensor[]): void {
  for (const p of params) {
    p.grad?.dispose();
    p.grad = null;
  }
}
