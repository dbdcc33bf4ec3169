/**
 * Reverse-mode autograd on the GPU. `backwardGpu(loss)` walks the nodes ops recorded (`tape.ts`)
 * in reverse topological order and sums each tensor's incoming gradients on the device; leaves
 * that require a gradient accumulate it into their persistent `grad` (summed over every use, so
 * weights shared by R loop steps get the sum of their R contributions).
 */
import type { GpuContext } from "./gpu-context.js";
import { type GpuNode, GpuTensor, nextTensorId } from "./gpu-tensor.js";
import { addInto, addTensors, copyTensor, fillTensor } from "./ops/elementwise.js";
import { type GradTarget, gpuNoGrad, withGradSink } from "./tape.js";

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

/** The tensor that owns `t`'s buffer (a reshape views its source's). */
function root(t: GpuTensor): GpuTensor {
  let r = t;
  while (r.base) r = r.base;
  return r;
}

/**
 * Backpropagate from `loss` (one element, or `seed` as its gradient). Leaf gradients accumulate
 * into `leaf.grad`; intermediate gradients are transient.
 *
 * Ops may write an input's gradient straight into its destination (`gradTarget`, tape.ts): a
 * leaf's persistent gradient, or the running sum the tape holds for an intermediate when that
 * sum is a buffer made during this walk that no other pending gradient shares (counted per
 * buffer: an op's backward may hand one tensor, or views of it, to several inputs). Otherwise
 * the tape adds the op's gradient to the sum with one more dispatch.
 */
export function backwardGpu(loss: GpuTensor, seed?: GpuTensor): void {
  const ctx: GpuContext = loss.ctx;
  if (!loss.requiresGrad) throw new Error("webgpu: backward of a tensor that needs no gradient");
  if (!seed && loss.size !== 1)
    throw new Error(
      `webgpu: backward needs a one-element loss or a seed, got ${loss.size} elements`,
    );
  // Tensors made from here on are this walk's own (ids increase).
  const firstId = nextTensorId();
  const grads = new Map<GpuTensor, GpuTensor>();
  // How many pending gradients (entries of `grads`) each buffer backs.
  const refs = new Map<GpuTensor, number>();
  const setGrad = (t: GpuTensor, g: GpuTensor | null) => {
    const old = grads.get(t);
    if (old) {
      const r = root(old);
      refs.set(r, refs.get(r)! - 1);
    }
    if (g) {
      grads.set(t, g);
      const r = root(g);
      refs.set(r, (refs.get(r) ?? 0) + 1);
    } else grads.delete(t);
  };
  setGrad(loss, seed ?? fillTensor(ctx, loss.shape, 1));
  const accumulate = (t: GpuTensor, g: GpuTensor) => {
    if (!t.requiresGrad) return;
    if (!t.node) {
      // A leaf: its persistent gradient buffer sums every use.
      if (g === t.grad) return; // written there by the op
      if (t.grad) addInto(t.grad, g);
      else {
        const leafGrad = new GpuTensor(ctx, t.shape, { persistent: true });
        copyTensor(g, leafGrad);
        t.grad = leafGrad;
      }
      return;
    }
    const prev = grads.get(t);
    if (prev === g) return; // written there by the op
    // Never add in place here: an op's backward may hand the same tensor to several inputs.
    setGrad(t, prev ? addTensors(prev, g) : g);
  };
  const sink = (t: GpuTensor): GradTarget => {
    if (!t.requiresGrad) throw new Error("webgpu: gradTarget of a tensor that needs no gradient");
    if (!t.node) {
      if (t.grad) return { out: t.grad, accumulate: true };
      t.grad = new GpuTensor(ctx, t.shape, { persistent: true });
      return { out: t.grad, accumulate: false };
    }
    const prev = grads.get(t);
    if (!prev) {
      const out = new GpuTensor(ctx, t.shape);
      setGrad(t, out);
      return { out, accumulate: false };
    }
    const r = root(prev);
    if (prev === r && r.id >= firstId && refs.get(r) === 1) return { out: prev, accumulate: true };
    return { out: new GpuTensor(ctx, t.shape), accumulate: false };
  };
  if (!loss.node) {
    accumulate(loss, grads.get(loss)!);
    return;
  }
  const order = topoOrder(loss);
  withGradSink(sink, () => {
    for (let k = order.length - 1; k >= 0; k--) {
      const node = order[k]!;
      const gOut = node.outputs.map((o) => grads.get(o) ?? null);
      if (gOut.every((g) => g === null)) continue;
      const gIn = gpuNoGrad(() => node.backward(gOut));
      node.inputs.forEach((t, i) => {
        const g = gIn[i];
        if (g) accumulate(t, g);
      });
      // The outputs' gradients are consumed: no later node reads them.
      for (const o of node.outputs) setGrad(o, null);
    }
  });
}

/** Zero (drop) the gradients of `params` before the next step. */
export function zeroGpuGrads(params: readonly GpuTensor[]): void {
  for (const p of params) {
    p.grad?.dispose();
    p.grad = null;
  }
}
