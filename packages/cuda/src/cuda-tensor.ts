/*
 * A tensor on a CUDA device: a block of the context's caching allocator (or a view into
 * another tensor's block: reshapes, slices), its shape and element type, and its place on the
 * tape. Float tensors are fp32 (`f32`, parameters and activations) or the bf16 operand copies of
 * mixed-precision GEMMs (`bf16`); index tensors are `i32` and keep their host values (packed
 * documents' boundaries are derived on the host from them, without a read-back).
 */
import type { CudaContext } from "./context.js";
import type { TapeNode } from "./tape.js";

/** Element types of a device tensor. */
export type DType = "f32" | "bf16" | "i32";

/** Bytes per element of each type. */
export const DTYPE_BYTES: Record<DType, number> = { f32: 4, bf16: 2, i32: 4 };

let nextId = 1;

/** The id the next tensor will get (tensors made after this call have ids ≥ it). */
export function nextTensorId(): number {
  return nextId;
}

/** See the file comment. */
export class CudaTensor {
  /** A process-wide serial number, for messages and ordering. */
  readonly id = nextId++;
  /** Element count: the product of `shape`. */
  readonly size: number;
  /** Records a gradient path (an input of a recorded op needs a gradient). */
  requiresGrad = false;
  /** A leaf that gathers a gradient (a trainable parameter). */
  trainable = false;
  /**
   * The gradient block of a trainable leaf: persistent, kept across steps (so a step's
   * allocations match the previous one's); it holds the gradient while `gradLive`.
   */
  grad: CudaTensor | null = null;
  /** Whether `grad` holds this step's gradient (false after `zeroGrads`: the block is reused). */
  gradLive = false;
  /** The recorded op that produced it. */
  node: TapeNode | null = null;
  /** Bumped on every in-place change (write, update): cached bf16 copies of it are stale. */
  version = 0;
  /** Whether its block went back to the pool; reading it then throws. */
  released = false;
  private storage: number;

  constructor(
    readonly ctx: CudaContext,
    readonly shape: readonly number[],
    readonly dtype: DType,
    readonly persistent: boolean,
    /** The tensor owning the block this one views, or null when it owns its block. */
    readonly base: CudaTensor | null = null,
    readonly byteOffset = 0,
    /** Host copy of an index tensor's values. */
    readonly hostInt: Int32Array | null = null,
  ) {
    this.size = shape.reduce((a, b) => a * b, 1);
    this.storage = base ? 0 : ctx.allocator.alloc(this.size * DTYPE_BYTES[dtype], persistent);
    if (!base) ctx.adopt(this);
  }

  /** The device address of element 0. */
  get ptr(): number {
    if (this.base) return this.base.ptr + this.byteOffset;
    if (this.released) throw new Error(`cuda: tensor ${this.id} [${this.shape}] was released`);
    return this.storage;
  }

  /** Bytes its elements take at its dtype. */
  get bytes(): number {
    return this.size * DTYPE_BYTES[this.dtype];
  }

  /** The tensor owning the block. */
  get owner(): CudaTensor {
    return this.base ? this.base.owner : this;
  }

  /** Give the block back to the allocator (views: nothing of their own). */
  releaseStorage(): void {
    if (this.base || this.released) return;
    this.released = true;
    this.ctx.allocator.release(this.storage);
  }
}
