/*
 * Tensors that live on the GPU: a pooled storage buffer, a shape and an element type. Tensors
 * made during a step are transient: `releaseTransients` returns their buffers to the pool at the
 * end of the step, except those the caller keeps. Parameters, their gradients and optimiser
 * state are persistent and are released only by `dispose`.
 */
import type { DeviceNode } from "@loop/tensor/kernel";
import type { GpuContext } from "./gpu-context.js";
import { getOrMake } from "./memo.js";

export type Shape = readonly number[];

/** One recorded op of the GPU tape (`tape.ts`). */
export type GpuNode = DeviceNode<GpuTensor>;
/** The element types a GPU tensor holds: float32 or int32. */
export type GpuDtype = "f32" | "i32";

/**
 * A tensor's value left as S partial sums (a split-K GEMM's products, kernels/gemm.ts; a column
 * sum's row blocks, ops/column-sum.ts): element i is Σ_{s<S} buf[s·stride + i], summed in s order
 * from 0.0 (what the split-K sum kernel writes).
 */
export interface PartialSums {
  buf: GPUBuffer;
  S: number;
  stride: number;
}

/** Partial sums not yet written into their tensor, and the dispatch that writes them. */
interface PendingSum {
  sums: PartialSums;
  /** The sum is added to the value already in the buffer (false: the partials alone are it). */
  ontoValue: boolean;
  /** Enqueue the sum into `into` (the tensor's buffer) and release the partials. */
  settle(into: GPUBuffer): void;
}

let nextId = 1;

/** The id the next tensor made will have (ids increase: every tensor made later has one ≥ it). */
export function nextTensorId(): number {
  return nextId;
}
const transients = new WeakMap<GpuContext, Set<GpuTensor>>();

function sizeOf(shape: Shape): number {
  let n = 1;
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0)
      throw new Error(`webgpu: invalid shape [${shape.join(",")}]`);
    n *= d;
  }
  return n;
}

/**
 * A tensor in a GPU buffer: shape, element type, and its place on the GPU tape; pooled, released
 * when no longer needed.
 */
export class GpuTensor {
  /** A process-unique id (tape bookkeeping, debugging). */
  readonly id = nextId++;
  /** The context whose device holds the buffer. */
  readonly ctx: GpuContext;
  /** The shape, outermost axis first. */
  readonly shape: Shape;
  /** The number of entries. */
  readonly size: number;
  /** The element type. */
  readonly dtype: GpuDtype;
  /** Kept until disposed (a parameter) rather than released with the step's transients. */
  readonly persistent: boolean;
  private buf: GPUBuffer | null;
  private pending: PendingSum | null = null;
  /** True for trainable leaves and for every tensor computed from one while recording. */
  requiresGrad = false;
  /** Accumulated gradient of a persistent leaf after `backwardGpu` (persistent, same shape). */
  grad: GpuTensor | null = null;
  /** Whether `grad` holds this step's gradient: whether there is one (zeroing drops it). */
  get gradLive(): boolean {
    return this.grad !== null;
  }
  set gradLive(_live: boolean) {
    // derived from `grad` (the tape sets it after writing `grad`, or when zeroing drops it)
  }
  /** The op that produced this tensor while recording (null for leaves). */
  node: GpuNode | null = null;
  /** An optional name for error messages and debugging. */
  name: string | undefined;

  /** The tensor whose buffer this one views (a reshape), or null when it owns its buffer. */
  readonly base: GpuTensor | null;

  constructor(
    ctx: GpuContext,
    shape: Shape,
    opts: { dtype?: GpuDtype; persistent?: boolean; viewOf?: GpuTensor; adopt?: GPUBuffer } = {},
  ) {
    this.ctx = ctx;
    this.shape = Object.freeze([...shape]);
    this.size = sizeOf(shape);
    this.dtype = opts.viewOf?.dtype ?? opts.dtype ?? "f32";
    this.base = opts.viewOf ?? null;
    if (this.base) {
      if (this.base.size !== this.size)
        throw new Error(
          `webgpu reshape: [${this.base.shape.join(",")}] has ${this.base.size} elements, [${shape.join(",")}] needs ${this.size}`,
        );
      // A view owns nothing: its buffer lives as long as the tensor it views.
      this.persistent = true;
      this.buf = this.base.buffer;
      return;
    }
    this.persistent = opts.persistent ?? false;
    this.buf = opts.adopt ?? ctx.allocBytes(this.size * 4);
    if (!this.persistent) getOrMake(transients, ctx, () => new Set()).add(this);
  }

  /**
   * The storage buffer (throws once released). A tensor left as partial sums has them summed
   * into it first (one dispatch, enqueued before whatever the caller enqueues with the buffer).
   */
  get buffer(): GPUBuffer {
    const buf = this.storage;
    this.settle();
    return buf;
  }

  /**
   * The storage buffer as it is: pending partial sums are not added in. For a producer given
   * the tensor as its destination (GemmCall.sumInto), which adds its own partials to them or
   * settles them before it writes.
   */
  get storage(): GPUBuffer {
    if (this.base?.released) this.buf = null;
    if (!this.buf) throw new Error(`webgpu: tensor ${this.name ?? this.id} was already released`);
    return this.buf;
  }

  /** Enqueue the pending sum into the buffer now, if there is one. */
  settle(): void {
    const p = this.pending;
    if (!p || !this.buf) return;
    this.pending = null;
    p.settle(this.buf);
  }

  /**
   * Leave this tensor's value as partial sums (ops/partial-sums.ts) until it is read: a consumer
   * that sums them itself (`partialSums`) saves the sum's dispatch; a later producer of the same
   * layout adds its own partials to them (`accumulator`: a weight's gradient over its R
   * applications is summed once); any other read (`buffer`) runs `settle` first, the dispatch
   * the producer would have run, so the same bits. With `ontoValue` the sum is added to the
   * value already held. A sum still pending is settled first.
   */
  deferSum(sums: PartialSums, settle: (into: GPUBuffer) => void, ontoValue = false): void {
    if (this.base || !this.buf) throw new Error("webgpu: deferSum on a view or a released tensor");
    this.settle();
    this.pending = { sums, settle, ontoValue };
  }

  /**
   * The partial sums this tensor's value is still left as (null once it is written, or when
   * they are to be added to the value it holds: a consumer summing them would miss that value).
   */
  get partialSums(): PartialSums | null {
    return this.pending && !this.pending.ontoValue ? this.pending.sums : null;
  }

  /**
   * The buffer of pending partials laid out as S × stride, into which a producer may add its own
   * partials element by element (the value stays their sum), or null; nothing is settled.
   */
  accumulator(S: number, stride: number): GPUBuffer | null {
    const p = this.pending?.sums;
    return p && p.S === S && p.stride === stride ? p.buf : null;
  }

  /** True once its buffer went back to the pool. */
  get released(): boolean {
    return this.buf === null || (this.base?.released ?? false);
  }

  /** The number of axes. */
  get rank(): number {
    return this.shape.length;
  }

  /** The length of the last axis. */
  get lastDim(): number {
    return this.shape[this.shape.length - 1] ?? 1;
  }

  /** The number of rows when the last axis is viewed as columns. */
  get rows(): number {
    const last = this.lastDim;
    return last === 0 ? 0 : this.size / last;
  }

  /** Copy the values back to the CPU (flushes the pending work and waits for it). */
  async read(): Promise<Float32Array> {
    if (this.dtype !== "f32") throw new Error("webgpu: read() of an integer tensor; use readInt()");
    return new Float32Array(await this.ctx.read(this.buffer, this.size));
  }

  /** Copy int32 values back to the CPU (flushes the pending work and waits for it). */
  async readInt(): Promise<Int32Array> {
    if (this.dtype !== "i32") throw new Error("webgpu: readInt() of a float tensor; use read()");
    return new Int32Array(await this.ctx.read(this.buffer, this.size));
  }

  /** Overwrite the values from the CPU. */
  write(values: Float32Array | Int32Array): void {
    if (values.length !== this.size)
      throw new Error(`webgpu: write of ${values.length} values into a tensor of ${this.size}`);
    this.ctx.write(this.buffer, values);
  }

  /**
   * Return the buffer to the pool now but keep the tensor's place on the tape (its node): for a
   * value the forward is done with that no recorded backward reads (tape.ts `releaseUnkept`).
   */
  freeStorage(): void {
    if (!this.buf || this.base) return;
    if (this.pending) this.ctx.release(this.pending.sums.buf);
    this.pending = null;
    this.ctx.release(this.buf);
    this.buf = null;
    transients.get(this.ctx)?.delete(this);
  }

  /** Return the buffer to the pool now (also drops the gradient of a leaf). */
  dispose(): void {
    if (!this.buf) return;
    if (this.pending) this.ctx.release(this.pending.sums.buf);
    this.pending = null;
    if (!this.base) this.ctx.release(this.buf);
    this.buf = null;
    this.node = null;
    transients.get(this.ctx)?.delete(this);
    this.grad?.dispose();
    this.grad = null;
  }
}

/** A tensor holding `values` (f32 unless given an Int32Array). */
export function uploadTensor(
  ctx: GpuContext,
  values: Float32Array | Int32Array,
  shape: Shape,
  opts: { persistent?: boolean; requiresGrad?: boolean; name?: string } = {},
): GpuTensor {
  const dtype: GpuDtype = values instanceof Int32Array ? "i32" : "f32";
  const t = new GpuTensor(ctx, shape, { dtype, persistent: opts.persistent });
  if (values.length !== t.size) {
    t.dispose();
    throw new Error(`webgpu: ${values.length} values do not fill shape [${shape.join(",")}]`);
  }
  t.write(values);
  t.requiresGrad = opts.requiresGrad ?? false;
  t.name = opts.name;
  return t;
}

/** A trainable leaf that stays on the device across steps. */
export function gpuParameter(
  ctx: GpuContext,
  values: Float32Array,
  shape: Shape,
  name?: string,
): GpuTensor {
  return uploadTensor(ctx, values, shape, { persistent: true, requiresGrad: true, name });
}

/**
 * A transient tensor of `words` 32-bit words owning `buf` (from `ctx.allocBytes`): raw storage,
 * such as f16 values two per word, released with the step's other transients.
 */
export function wrapBuffer(ctx: GpuContext, buf: GPUBuffer, words: number): GpuTensor {
  return new GpuTensor(ctx, [words], { dtype: "i32", adopt: buf });
}

/** An output tensor of an op (transient, contents to be written by the op's kernel). */
export function emptyLike(ctx: GpuContext, shape: Shape, dtype: GpuDtype = "f32"): GpuTensor {
  return new GpuTensor(ctx, shape, { dtype });
}

/**
 * End of a step: every transient tensor made since the last call goes back to the pool except
 * those in `keep`.
 */
export function releaseTransients(ctx: GpuContext, keep: readonly GpuTensor[] = []): void {
  const set = transients.get(ctx);
  if (!set) return;
  const kept = new Set(keep);
  for (const t of [...set]) if (!kept.has(t)) t.dispose();
}

/**
 * Free the transient tensors made since `firstId` (`nextTensorId()` earlier) except `keep` and
 * the tensors they view (activation checkpointing drops a step's forward at once).
 */
export function releaseTransientsSince(
  ctx: GpuContext,
  firstId: number,
  keep: readonly GpuTensor[],
): void {
  const set = transients.get(ctx);
  if (!set) return;
  const kept = new Set<GpuTensor>();
  for (const t of keep) {
    kept.add(t);
    if (t.base) kept.add(t.base);
  }
  for (const t of [...set]) if (t.id >= firstId && !kept.has(t)) t.dispose();
}

/** Number of live transient tensors (tests check that a step leaks none). */
export function transientCount(ctx: GpuContext): number {
  return transients.get(ctx)?.size ?? 0;
}
