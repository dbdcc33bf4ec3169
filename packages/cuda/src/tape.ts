/*
 * The tape of the CUDA backend: each op that records pushes a node (its inputs, its outputs and
 * a backward that enqueues the kernels of its input gradients); `backwardFrom` walks the nodes
 * in reverse recording order — a topological order — with the seeded loss gradient. Gradients
 * of intermediates are fresh transient tensors (summed out of place where two ops feed one
 * tensor); those of trainable leaves accumulate in place into a persistent tensor.
 */
import type { CudaContext } from "./context.js";
import { CudaTensor } from "./cuda-tensor.js";

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
let walk: { grads: Map<CudaTensor, CudaTensor>; owned: Set<CudaTensor> } | null = null;

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
  walk = { grads, owned: new Set() };
  const ends = new Set(wrt);
  const tape = ctx.tape.splice(0);
  try {
    for (let i = tape.length - 1; i >= 0; i--) {
      const node = tape[i]!;
      const gs = node.outputs.map((o) => grads.get(o) ?? null);
      if (gs.every((g) => g === null)) continue;
      const gin = ctx.withRecording(false, () => node.backward(gs));
      const passed = new Set(gs);
      node.inputs.forEach((x, k) => {
        const g = gin[k];
        if (g && x.requiresGrad) accumulate(ctx, walk!, x, g, ends, passed);
      });
    }
  } finally {
    walk = outer;
  }
  return wrt.map((t) => grads.get(t) ?? null);
}

function accumulate(
  ctx: CudaContext,
  w: { grads: Map<CudaTensor, CudaTensor>; owned: Set<CudaTensor> },
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
    return;
  }
  const prev = w.grads.get(x);
  if (!prev) {
    w.grads.set(x, g);
    // a block of its own (not an output's gradient passed through, not a view): later
    // contributions may be added into it (gradTarget)
    if (!g.base && !passed.has(g)) w.owned.add(g);
    return;
  }
  const sum = ctx.empty(x.shape);
  ctx.run("add_bcast", ctx.elems(x.size), [x.size, x.size, prev, g, sum]);
  w.grads.set(x, sum);
  w.owned.add(sum);
}
