/*
 * Reverse-mode autograd on the GPU. `backwardGpu(loss)` walks the nodes ops recorded (`tape.ts`)
 * in reverse topological order and sums each tensor's incoming gradients on the device; leaves
 * that require a gradient accumulate it into their persistent `grad` (summed over every use, so
 * weights shared by R loop steps get the sum of their R contributions).
 *
 * Ops may write an input's gradient straight into its destination (`gradTarget`, tape.ts): a
 * leaf's persistent gradient, or the running sum the tape holds for an intermediate when that
 * sum is a buffer made during this walk that no other pending gradient shares (counted per
 * buffer: an op's backward may hand one tensor, or views of it, to several inputs). Otherwise
 * the tape adds the op's gradient to the sum with one more dispatch.
 *
 * With `release`, memory goes back to the context's pool as the walk consumes it: a node's
 * outputs once its own backward is queued (every consumer of them comes later in the forward,
 * so its backward was queued before; not one seen through a detached view, whose consumers are
 * not ordered after it), and each intermediate gradient once nothing refers to it.
 * The GPU runs queued work in order, so a buffer reused by a later kernel is only overwritten
 * after the kernels queued before have read it. The same count decides both: a running sum is a
 * gradient target only while the tape holds it alone (so it is live, never released), and it is
 * released only once nothing refers to it (no later op can be handed it as a target).
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

export interface BackwardOptions {
  /** Free activations and intermediate gradients as the walk consumes them (see above). */
  release?: boolean;
  /**
   * Leaves (without a node) whose gradient is returned, as a transient tensor, instead of
   * accumulated into a persistent `grad` (activation checkpointing's recomputed input).
   */
  wrt?: readonly GpuTensor[];
}

/**
 * Counts the references to the gradients made during one walk (by the tensor owning the buffer,
 * a view counting for its base): the pending gradients the tape holds, and an op's returned
 * gradients while they are accumulated. With `release` on, frees a buffer when its count drops
 * to zero. Tensors from before the walk (activations, a given seed, parameters) are never
 * counted, written in place or freed here.
 */
class GradRefs {
  private readonly counts = new Map<GpuTensor, number>();
  constructor(
    private readonly firstId: number,
    private readonly release: boolean,
  ) {}
  private owner(g: GpuTensor): GpuTensor | null {
    const o = root(g);
    return !o.persistent && o.id >= this.firstId ? o : null;
  }
  hold(g: GpuTensor): void {
    const o = this.owner(g);
    if (o) this.counts.set(o, (this.counts.get(o) ?? 0) + 1);
  }
  drop(g: GpuTensor): void {
    const o = this.owner(g);
    if (!o) return;
    const n = (this.counts.get(o) ?? 0) - 1;
    if (n > 0) this.counts.set(o, n);
    else {
      this.counts.delete(o);
      if (this.release) o.dispose();
    }
  }
  /** Whether `g` owns a buffer made during this walk that nothing but one reference holds. */
  sole(g: GpuTensor): boolean {
    return this.owner(g) === g && this.counts.get(g) === 1 && !g.released;
  }
}

/**
 * Backpropagate from `loss` (one element, or `seed` as its gradient). Leaf gradients accumulate
 * into `leaf.grad`; intermediate gradients are transient. Returns the gradients of `opts.wrt`.
 */
export function backwardGpu(
  loss: GpuTensor,
  seed?: GpuTensor,
  opts: BackwardOptions = {},
): (GpuTensor | null)[] {
  const ctx: GpuContext = loss.ctx;
  if (!loss.requiresGrad) throw new Error("webgpu: backward of a tensor that needs no gradient");
  if (!seed && loss.size !== 1)
    throw new Error(
      `webgpu: backward needs a one-element loss or a seed, got ${loss.size} elements`,
    );
  const release = opts.release ?? false;
  const wrt = new Set(opts.wrt ?? []);
  // Tensors made from here on are this walk's own (ids increase).
  const refs = new GradRefs(nextTensorId(), release);
  const grads = new Map<GpuTensor, GpuTensor>();
  const setGrad = (t: GpuTensor, g: GpuTensor) => {
    const prev = grads.get(t);
    grads.set(t, g);
    refs.hold(g);
    if (prev) refs.drop(prev);
  };
  /** A leaf whose gradient sums into its persistent `grad` (not one of `wrt`). */
  const isLeaf = (t: GpuTensor) => !t.node && !wrt.has(t);
  setGrad(loss, seed ?? fillTensor(ctx, loss.shape, 1));
  const accumulate = (t: GpuTensor, g: GpuTensor) => {
    if (!t.requiresGrad) return;
    if (isLeaf(t)) {
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
    if (isLeaf(t)) {
      if (t.grad) return { out: t.grad, accumulate: true };
      t.grad = new GpuTensor(ctx, t.shape, { persistent: true });
      return { out: t.grad, accumulate: false };
    }
    const prev = grads.get(t);
    if (!prev) {
      // Held by the tape from now on: the op writes it, then returns it as t's gradient.
      const out = new GpuTensor(ctx, t.shape);
      setGrad(t, out);
      return { out, accumulate: false };
    }
    // Added to in place only when the tape's sum for t is the sole reference to its buffer.
    if (refs.sole(prev)) return { out: prev, accumulate: true };
    return { out: new GpuTensor(ctx, t.shape), accumulate: false };
  };
  if (!loss.node) {
    accumulate(loss, grads.get(loss)!);
    return (opts.wrt ?? []).map((t) => grads.get(t) ?? null);
  }
  const order = topoOrder(loss);
  // A view with no node of its own (a detached tensor) reaches its consumers outside the tape's
  // order: the tensor it views stays until the end of the micro-batch.
  const pinned = new Set<GpuTensor>();
  if (release)
    for (const node of order)
      for (const t of node.inputs) if (!t.node) for (let b = t.base; b; b = b.base) pinned.add(b);
  withGradSink(sink, () => {
    for (let k = order.length - 1; k >= 0; k--) {
      const node = order[k]!;
      const gOut = node.outputs.map((o) => grads.get(o) ?? null);
      if (gOut.every((g) => g === null)) continue;
      const gIn = gpuNoGrad(() => node.backward(gOut));
      // Held while they are accumulated, so that one handed to several inputs lives until the
      // last.
      for (const g of gIn) if (g) refs.hold(g);
      node.inputs.forEach((t, i) => {
        const g = gIn[i];
        if (g) accumulate(t, g);
      });
      // The outputs' gradients are consumed: no later node reads them.
      for (const o of node.outputs) {
        const g = grads.get(o);
        if (g) {
          grads.delete(o);
          refs.drop(g);
        }
      }
      for (const g of gIn) if (g) refs.drop(g);
      // Every consumer of the outputs has had its backward queued: they are dead now.
      if (release) for (const o of node.outputs) if (!o.persistent && !pinned.has(o)) o.dispose();
    }
  });
  return (opts.wrt ?? []).map((t) => grads.get(t) ?? null);
}

/** Zero (drop) the gradients of `params` before the next step. */
export function zeroGpuGrads(params: readonly GpuTensor[]): void {
  for (const p of params) {
    p.grad?.dispose();
    p.grad = null;
  }
}
