/*
 * The tape and backward walk of a device backend (CUDA, WebGPU), written once over the
 * backend's tensor type T: ops record a node (inputs, outputs, a backward that enqueues the
 * kernels of its input gradients) and `backward` walks the nodes back from a root with its seed.
 * The backend supplies what the walk needs of its memory (`TapeMemory`): make a tensor, copy and
 * add gradients, give a block back, tensor ids as marks of time.
 *
 * Gradients of trainable leaves gather in a persistent block (`grad`, holding this step's
 * gradient while `gradLive`): the first contribution is copied in, later ones added. Gradients
 * of intermediates are the walk's own transient tensors; where two ops feed one tensor they are
 * summed, in place when the sum is a block of the walk's own that nothing else refers to
 * (`gradTarget`: an op writes the gradient there itself, with no summing launch).
 *
 * Memory goes back as the walk consumes it. A tensor's gradient is needed only until the node
 * that made it has run its backward (each tensor has one producer, and the walk visits nodes in
 * reverse topological order), so each intermediate gradient's block is given back then — once
 * no other gradient the walk holds views it (references counted per block) — instead of at the
 * end of the step: the walk holds the gradients of one frontier, not of the whole graph.
 * Optionally (`TapeMemory.releaseSince`) what a node's backward made for itself (scratch) goes
 * back as soon as that backward has run, and (`releaseOutputs`) a node's outputs once its own
 * backward has run (every consumer of them ran its backward before). Tensors older than the
 * walk (activations, parameters, a caller's seed) are never written in place nor given back.
 */
import type {
  DeviceNode,
  GradTarget,
  TapeMemory,
  TapeTensor,
  WalkOptions,
} from "./device-tape-types.js";
import { isLeaf, topoOrder, Walk } from "./device-walk.js";

/** See the file comment: one backend's recording switch, nodes and walks. */
export class DeviceTape<T extends TapeTensor<T>> {
  /** Whether ops record now (false inside a no-grad region). */
  recording = true;
  /** Recorded nodes since the last walk or `clear` (when made with `keepList`). */
  readonly nodes: DeviceNode<T>[] = [];
  private walk: Walk<T> | null = null;

  /**
   * `keepList`: the tape keeps its nodes in recording order (walked from there, cleared by each
   * walk); otherwise nodes hang on their outputs only and a walk finds them from its root.
   */
  constructor(
    readonly mem: TapeMemory<T>,
    private readonly keepList = false,
  ) {}

  /** Whether a backward walk is running (an op's backward is being called by it). */
  get walking(): boolean {
    return this.walk !== null;
  }

  /** Run `fn` with recording set to `on`, restoring the previous setting afterwards. */
  withRecording<R>(on: boolean, fn: () => R): R {
    const was = this.recording;
    this.recording = on;
    try {
      return fn();
    } finally {
      this.recording = was;
    }
  }

  /**
   * Record `outputs` as made from `inputs` by an op whose gradient `backward` computes; does
   * nothing when recording is off or no input requires a gradient. Returns the node, or null.
   * `keeps`: the tensors whose values the backward reads (`TapeMemory.keep`; default all).
   */
  record(
    name: string,
    inputs: readonly T[],
    outputs: readonly T[],
    backward: DeviceNode<T>["backward"],
    keeps: readonly T[] = [...inputs, ...outputs],
  ): DeviceNode<T> | null {
    if (!this.recording || !inputs.some((t) => t.requiresGrad)) return null;
    const node: DeviceNode<T> = { name, inputs, outputs, backward };
    for (const o of outputs) {
      o.requiresGrad = true;
      o.node = node;
    }
    if (this.mem.keep) for (const t of keeps) this.mem.keep(t);
    if (this.keepList) this.nodes.push(node);
    return node;
  }

  /** Forget the recorded nodes (the step's tensors are gone). */
  clear(): void {
    this.nodes.length = 0;
  }

  /**
   * Where an op's backward may write the gradient of leaf `x` itself: its gradient block, added
   * to when it already holds this step's gradient. The op then returns null (or that block) for
   * `x`. Null when `x` is not a leaf that gathers a gradient.
   */
  leafTarget(x: T): GradTarget<T> | null {
    if (x.node || !x.requiresGrad || !this.mem.gathers(x)) return null;
    if (this.walk?.ends.has(x)) return null; // (a walk's end: its gradient is returned)
    const { block, live } = this.leafBlock(x);
    x.gradLive = true;
    return { out: block, acc: live };
  }

  /**
   * `leafTarget`, and for an intermediate whose gradient the running walk holds in a block of
   * its own that nothing else refers to: that block, added to — so a tensor read by several ops
   * (q, k and v from one input) gathers its gradient without a summing launch. Null otherwise:
   * the op returns a fresh gradient.
   */
  gradTarget(x: T): GradTarget<T> | null {
    const w = this.walk;
    if (!x.node && !w?.ends.has(x)) return this.leafTarget(x);
    const g = w?.grads.get(x);
    return g && w!.sole(g) ? { out: g, acc: true } : null;
  }

  /**
   * Walk back from `root` with its gradient `seed` (a function: made inside the walk, so given
   * back once consumed). Leaves gather their gradients; returns the gradients of `o.wrt` in
   * their order (null where none reached them).
   */
  backward(root: T, seed: T | (() => T), o: WalkOptions<T> = {}): (T | null)[] {
    const mem = this.mem;
    const ends = new Set(o.wrt ?? []);
    const w = new Walk(mem, ends, o.releaseGrads ?? true);
    const outer = this.walk;
    this.walk = w;
    try {
      const nodes = o.nodes ?? (this.keepList ? this.nodes.splice(0) : topoOrder(root));
      const s = typeof seed === "function" ? seed() : seed;
      if (s.size !== root.size)
        throw new Error(`backward: seed [${s.shape}] for a root [${root.shape}]`);
      w.hold(s);
      if (!root.node) {
        this.accumulate(w, root, s);
        return (o.wrt ?? []).map((t) => w.grads.get(t) ?? null);
      }
      w.grads.set(root, s);
      // a view with no node of its own (detached) reaches its consumers outside the walk's
      // order: the blocks it views stay until the end of the step
      const pinned = new Set<T>();
      if (o.releaseOutputs)
        for (const node of nodes)
          for (const t of node.inputs)
            if (!t.node) for (let b = t.base; b; b = b.base) pinned.add(b);
      for (let i = nodes.length - 1; i >= 0; i--) {
        const node = nodes[i]!;
        const gs = node.outputs.map((t) => w.grads.get(t) ?? null);
        if (gs.every((g) => g === null)) continue;
        const mark = mem.nextId();
        const gin = this.withRecording(false, () => node.backward(gs));
        // held while they are accumulated: one handed to several inputs lives until the last
        for (const g of gin) if (g) w.hold(g);
        // an output's gradient passed on unchanged is not a block of the input's own
        const passed = new Set(gs);
        node.inputs.forEach((x, k) => {
          const g = gin[k];
          if (g && x.requiresGrad) this.accumulate(w, x, g, passed);
        });
        // the outputs' gradients are consumed: their producer has run (see the file comment)
        for (const t of node.outputs) {
          const g = w.grads.get(t);
          if (!g || ends.has(t)) continue;
          w.grads.delete(t);
          w.drop(g);
        }
        for (const g of gin) if (g) w.drop(g);
        if (o.releaseOutputs)
          for (const t of node.outputs) if (!t.persistent && !pinned.has(t)) mem.dispose(t);
        if (o.releaseScratch)
          mem.releaseSince?.(mark, [...w.grads.values()], node.outputs[0] ?? root);
      }
      return (o.wrt ?? []).map((t) => w.grads.get(t) ?? null);
    } finally {
      this.walk = outer;
    }
  }

  /** Leaf x's gradient block (made when it has none) and whether it holds this step's gradient. */
  private leafBlock(x: T): { block: T; live: boolean } {
    if (x.grad) return { block: x.grad, live: x.gradLive };
    x.grad = this.mem.empty(x, true);
    return { block: x.grad, live: false };
  }

  /** Add `g` into x's gradient (see the file comment); `g` is held by the caller. */
  private accumulate(w: Walk<T>, x: T, g: T, passed: ReadonlySet<T | null> = new Set()): void {
    if (g.size !== x.size)
      throw new Error(`backward: gradient [${g.shape}] for a tensor [${x.shape}]`);
    const mem = this.mem;
    if (isLeaf(x, w.ends)) {
      if (!mem.gathers(x) || g === x.grad) return; // (written there by the op: leafTarget)
      const { block, live } = this.leafBlock(x);
      if (live) mem.addInto(block, g);
      else mem.copyInto(block, g);
      x.gradLive = true;
      return;
    }
    const prev = w.grads.get(x);
    if (prev === g) return; // added in place by the op (gradTarget): already held
    if (!prev) {
      w.grads.set(x, g);
      w.hold(g);
      // a block of its own (not an output's gradient passed through, not a view): later
      // contributions may be added into it (gradTarget)
      if (!g.base && !passed.has(g) && g.id >= w.firstId) w.owned.add(g);
      return;
    }
    const sum = mem.add(prev, g);
    w.grads.set(x, sum);
    w.hold(sum);
    w.owned.add(sum);
    w.drop(prev);
  }

  /**
   * Gradients gathered: the leaves' blocks stay (the next step overwrites them) unless `free`,
   * which gives them back.
   */
  zeroGrads(params: readonly T[], free = false): void {
    for (const p of params) {
      p.gradLive = false;
      if (free && p.grad) {
        this.mem.dispose(p.grad);
        p.grad = null;
      }
    }
  }

  /** Whether leaf `t` holds a gradient of this step. */
  hasGrad(t: T): boolean {
    return t.requiresGrad && t.gradLive && t.grad !== null;
  }

  /**
   * Activation checkpointing: `fn(x)` runs without recording and its intermediates go back at
   * once (`releaseSince`), keeping only the output; the backward runs `fn` again on a stand-in
   * for x (`standIn`: a view of x's block with no node) with recording on, walks back through
   * that copy (the parameters' gradients gather as in an unwrapped walk) and returns x's
   * gradient to the outer walk. Memory: one tensor per wrapped call instead of every
   * activation inside it, for one extra forward of `fn`. `params`: the trainables `fn` reads.
   */
  checkpoint(
    fn: (x: T) => T,
    x: T,
    params: readonly T[],
    standIn: (x: T) => T,
    walk: Omit<WalkOptions<T>, "wrt" | "nodes"> = {},
  ): T {
    const inputs = [x, ...params];
    if (!this.recording || !inputs.some((t) => t.requiresGrad)) return fn(x);
    const mem = this.mem;
    const first = mem.nextId();
    const y = this.withRecording(false, () => fn(x));
    mem.releaseSince?.(first, [y], y);
    this.record("checkpoint", inputs, [y], ([g]) => {
      const again = mem.nextId();
      const xin = standIn(x);
      xin.requiresGrad = x.requiresGrad;
      const yr = this.withRecording(true, () => fn(xin));
      let gx: T | null = null;
      if (yr.requiresGrad) [gx] = this.backward(yr, g!, { ...walk, wrt: [xin] });
      if (walk.releaseScratch) mem.releaseSince?.(again, gx ? [gx] : [], x);
      return [x.requiresGrad ? gx : null, ...params.map(() => null)];
    });
    return y;
  }
}
