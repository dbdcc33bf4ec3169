/*
 * The tape of the CUDA backend: each op that records pushes a node (its inputs, its outputs and
 * a backward that enqueues the kernels of its input gradients); `backwardFrom` walks the nodes
 * in reverse recording order — a topological order — with the seeded loss gradient. Gradients
 * of intermediates are fresh transient tensors (summed out of place where two ops feed one
 * tensor); those of trainable leaves accumulate in place into a persistent tensor. A tensor's
 * gradient is needed only until the node that made the tensor has run its backward (each tensor
 * has one producer), so the walk gives each intermediate gradient's block back to the allocator
 * then — once no gradient still held views it — instead of at the end of the step: the walk
 * holds the gradients of one frontier, not of the whole graph. What a node's backward makes
 * for itself (scratch: a scan's chunk states, a softmax's recomputed rows) goes back as soon as
 * that backward has run, so every layer's backward reuses the same scratch blocks.
 */
import type { CudaContext } from "./context.js";
import { CudaTensor, nextTensorId } from "./cuda-tensor.js";

/** A recorded op. */
export interface TapeNode {
  name: string;
  inputs: readonly CudaTensor[];
  outputs: readonly CudaTensor[];
  /** Gradients of the inputs (null where none) from those of the outputs (null: zero). */
  backward(gs: readonly (CudaTensor | null)[]): (CudaTensor | null)[];
}

/**
 * Record `outputs` as made from `inputs` by an op whose gradient `backward` computes; does
 * nothing when recording is off or no input requires a gradient. Returns whether it recorded.
 */
export function record(
  ctx: CudaContext,
  name: string,
  inputs: readonly CudaTensor[],
  outputs: readonly CudaTensor[],
  backward: TapeNode["backward"],
): boolean {
  if (!ctx.recording || !inputs.some((t) => t.requiresGrad)) return false;
  const node: TapeNode = { name, inputs, outputs, backward };
  for (const o of outputs) {
    o.requiresGrad = true;
    o.node = node;
  }
  ctx.tape.push(node);
  return true;
}

/**
 * Where an op's backward may write the gradient of `x` itself: a trainable leaf's gradient
 * block, added to (`acc` 1: GEMM beta 1, a kernel's accumulate flag) when it already holds this
 * step's gradient, overwritten (`acc` 0) when not. The op then returns null for `x` (the tape
 * has nothing left to add). Null when `x` is not a trainable leaf.
 */
export function leafTarget(
  ctx: CudaContext,
  x: CudaTensor,
): { out: CudaTensor; acc: 0 | 1 } | null {
  if (x.node || !x.trainable || !x.requiresGrad) return null;
  x.grad ??= new CudaTensor(ctx, x.shape, "f32", true);
  const acc = x.gradLive ? 1 : 0;
  x.gradLive = true;
  return { out: x.grad, acc };
}

/** The walk running now: the gradients so far, and those it may add to in place. */
let walk: Walk | null = null;

/**
 * `leafTarget`, and for an intermediate tensor whose gradient the running walk already holds in
 * a block of its own (not another tensor's gradient passed through, not a view): that block,
 * added to (`acc` 1) — so a tensor read by several ops (q, k and v from one input) gathers its
 * gradient without a summing launch. Null otherwise: the op returns a fresh gradient.
 */
export function gradTarget(
  ctx: CudaContext,
  x: CudaTensor,
): { out: CudaTensor; acc: 0 | 1 } | null {
  if (!x.node) return leafTarget(ctx, x);
  const g = walk?.grads.get(x);
  return g && walk!.owned.has(g) ? { out: g, acc: 1 } : null;
}

/** Backpropagate from the one-element `loss` seeded with `weight` (see the file comment). */
export function backwardFrom(ctx: CudaContext, loss: CudaTensor, weight: number): void {
  if (loss.size !== 1) throw new Error(`cuda backward: the loss has shape [${loss.shape}]`);
  backwardWalk(ctx, loss, ctx.full([1], weight));
}

/**
 * Walk the recorded nodes back from `root` with its gradient `seed`; trainable leaves gather
 * their gradients, and the gradients of `wrt` (tensors the walk ends at: a checkpoint's input)
 * are returned in their order (null where none reached them).
 */
export function backwardWalk(
  ctx: CudaContext,
  root: CudaTensor,
  seed: CudaTensor,
  wrt: readonly CudaTensor[] = [],
): (CudaTensor | null)[] {
  const grads = new Map<CudaTensor, CudaTensor>();
  grads.set(root, seed);
  const outer = walk;
  // blocks made from here on are the walk's own (the seed and every forward tensor are older)
  const w: Walk = { grads, owned: new Set(), refs: new Map(), firstId: nextTensorId() };
  hold(w, seed);
  walk = w;
  const ends = new Set(wrt);
  const tape = ctx.tape.splice(0);
  try {
    for (let i = tape.length - 1; i >= 0; i--) {
      const node = tape[i]!;
      const gs = node.outputs.map((o) => grads.get(o) ?? null);
      if (gs.every((g) => g === null)) continue;
      const mark = nextTensorId();
      const gin = ctx.withRecording(false, () => node.backward(gs));
      const passed = new Set(gs);
      node.inputs.forEach((x, k) => {
        const g = gin[k];
        if (g && x.requiresGrad) accumulate(ctx, w, x, g, ends, passed);
      });
      // the outputs' gradients are consumed: their producer has run (see the file comment)
      for (const o of node.outputs) {
        const g = grads.get(o);
        if (!g || ends.has(o) || o === root) continue;
        grads.delete(o);
        drop(ctx, w, g);
      }
      // the node's own scratch: every block its backward made that no held gradient uses
      ctx.releaseTransientsSince(mark, [...grads.values()]);
    }
  } finally {
    walk = outer;
  }
  return wrt.map((t) => grads.get(t) ?? null);
}

/** The walk's state: gradients held, blocks it may add into, and how many gradients view each block. */
interface Walk {
  grads: Map<CudaTensor, CudaTensor>;
  owned: Set<CudaTensor>;
  refs: Map<CudaTensor, number>;
  /** Tensors with an id from here on were made by the walk. */
  firstId: number;
}

/** A gradient `g` is held (in `grads`): its block stays. */
function hold(w: Walk, g: CudaTensor): void {
  w.refs.set(g.owner, (w.refs.get(g.owner) ?? 0) + 1);
}

/** A gradient `g` is no longer held: its block goes back when nothing held views it. */
function drop(ctx: CudaContext, w: Walk, g: CudaTensor): void {
  const owner = g.owner;
  const n = (w.refs.get(owner) ?? 1) - 1;
  if (n > 0) return void w.refs.set(owner, n);
  w.refs.delete(owner);
  // only the walk's own transient blocks: never a parameter's gradient, a forward tensor, the seed
  if (owner.persistent || owner.id < w.firstId || owner.released) return;
  w.owned.delete(owner);
  ctx.dispose(owner);
}

function accumulate(
  ctx: CudaContext,
  w: Walk,
  x: CudaTensor,
  g: CudaTensor,
  ends: ReadonlySet<CudaTensor>,
  passed: ReadonlySet<CudaTensor | null>,
): void {
  if (g.size !== x.size)
    throw new Error(`cuda backward: gradient [${g.shape}] for a tensor [${x.shape}]`);
  if (!x.node && !ends.has(x)) {
    if (!x.trainable) return;
    x.grad ??= new CudaTensor(ctx, x.shape, "f32", true);
    if (!x.gradLive) {
      ctx.copyInto(x.grad, g);
      x.gradLive = true;
    } else {
      ctx.axpy(1, g, 1, x.grad);
    }
    // (g was added into the leaf's block: held by nothing, it can go)
    hold(w, g);
    drop(ctx, w, g);
    return;
  }
  const prev = w.grads.get(x);
  if (!prev) {
    w.grads.set(x, g);
    hold(w, g);
    // a block of its own (not an output's gradient passed through, not a view): later
    // contributions may be added into it (gradTarget)
    if (!g.base && !passed.has(g)) w.owned.add(g);
    return;
  }
  if (prev === g) return; // added in place by the op (gradTarget): already held
  const sum = ctx.empty(x.shape);
  ctx.run("add_bcast", ctx.elems(x.size), [x.size, x.size, prev, g, sum]);
  w.grads.set(x, sum);
  hold(w, sum);
  w.owned.add(sum);
  hold(w, g);
  drop(ctx, w, g);
  drop(ctx, w, prev);
}
