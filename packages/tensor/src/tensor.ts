/*
 * Float32 tensors: row-major storage plus a shape. Storage lives in a SharedArrayBuffer when the
 * platform offers one, so worker threads can read and write it without copies.
 */
import type { GradNode } from "./autograd/node.js";
import { scratchAlloc } from "./scratch.js";

/** A tensor's shape: its axis lengths, outermost first. */
export type Shape = readonly number[];

const hasShared = typeof SharedArrayBuffer !== "undefined";

/**
 * A zero-filled float32 buffer that is never taken from the scratch pool (parameters, caches
 * kept across steps), shared between threads when large.
 */
export function allocPersistentF32(n: number): Float32Array {
  if (hasShared && n >= 1024) return new Float32Array(new SharedArrayBuffer(n * 4));
  return new Float32Array(n);
}

/** Allocate a zero-filled float32 buffer, shared between threads when possible. */
export function allocF32(n: number): Float32Array {
  return scratchAlloc(n) ?? allocPersistentF32(n);
}

/**
 * Like allocF32 but the contents are unspecified (pooled memory is not cleared): only for
 * outputs that the caller overwrites in full before reading.
 */
export function allocF32Uninit(n: number): Float32Array {
  return scratchAlloc(n, false) ?? allocPersistentF32(n);
}

/** The number of entries of a tensor of `shape` (1 for a scalar shape []). */
export function sizeOf(shape: Shape): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** A shape as text, e.g. "[2,3]", for error messages. */
export function shapeStr(shape: Shape): string {
  return `[${shape.join(",")}]`;
}

/** Whether two shapes are equal axis by axis. */
export function sameShape(a: Shape, b: Shape): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function checkShape(shape: Shape, what: string): void {
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0) throw new Error(`${what}: invalid shape ${shapeStr(shape)}`);
  }
}

let nextId = 1;

/**
 * A float32 tensor on the CPU: row-major data, a shape and, while recording, its place on the
 * autograd tape (`requiresGrad`, `grad` after `backward`).
 */
export class Tensor {
  /** A process-unique id (tape bookkeeping, debugging). */
  readonly id = nextId++;
  /** The values, row-major. */
  readonly data: Float32Array;
  /** The shape, outermost axis first. */
  readonly shape: Shape;
  /** True for trainable leaves and for every tensor computed from one while recording. */
  requiresGrad: boolean;
  /** Accumulated gradient of a leaf after `backward()`. */
  grad: Float32Array | null = null;
  /** The op that produced this tensor (null for leaves and for inference-mode results). */
  node: GradNode | null = null;
  /** Index of this tensor among its node's outputs. */
  outputIndex = 0;
  /** An optional name for error messages and debugging (parameters carry their §6 name). */
  name: string | undefined;

  constructor(data: Float32Array, shape: Shape, requiresGrad = false) {
    checkShape(shape, "Tensor");
    const n = sizeOf(shape);
    if (data.length !== n) {
      throw new Error(
        `Tensor: data has ${data.length} elements but shape ${shapeStr(shape)} needs ${n}`,
      );
    }
    this.data = data;
    this.shape = Object.freeze([...shape]);
    this.requiresGrad = requiresGrad;
  }

  /** The number of entries. */
  get size(): number {
    return this.data.length;
  }

  /** The number of axes. */
  get rank(): number {
    return this.shape.length;
  }

  /** Size of the last axis. */
  get lastDim(): number {
    return this.shape[this.shape.length - 1] ?? 1;
  }

  /** The length of axis `i` (negative counts from the end). */
  dim(i: number): number {
    const k = i < 0 ? this.shape.length + i : i;
    const d = this.shape[k];
    if (d === undefined)
      throw new Error(`Tensor.dim: axis ${i} out of range for ${shapeStr(this.shape)}`);
    return d;
  }

  /** Number of rows when the last axis is viewed as columns. */
  get rows(): number {
    const last = this.lastDim;
    return last === 0 ? 0 : this.size / last;
  }

  /** The single value of a one-element tensor. */
  item(): number {
    if (this.size !== 1) throw new Error(`Tensor.item: tensor has ${this.size} elements`);
    return this.data[0]!;
  }

  /** The values as a plain array. */
  toArray(): number[] {
    return Array.from(this.data);
  }

  /** Zero the accumulated gradient. */
  zeroGrad(): void {
    this.grad = null;
  }
}

/** A tensor of zeros; a trainable leaf when `requiresGrad`. */
export function zeros(shape: Shape, requiresGrad = false): Tensor {
  return new Tensor(allocF32(sizeOf(shape)), shape, requiresGrad);
}

/** A tensor of `shape` filled with `value`. */
export function full(shape: Shape, value: number): Tensor {
  const t = zeros(shape);
  t.data.fill(value);
  return t;
}

/** Build a tensor from numbers (copied into fresh float32 storage). */
export function tensor(values: ArrayLike<number>, shape?: Shape, requiresGrad = false): Tensor {
  const s = shape ?? [values.length];
  const data = allocF32(sizeOf(s));
  if (values.length !== data.length) {
    throw new Error(`tensor: ${values.length} values do not fill shape ${shapeStr(s)}`);
  }
  data.set(values);
  return new Tensor(data, s, requiresGrad);
}

/** A trainable leaf. */
export function parameter(data: Float32Array, shape: Shape, name?: string): Tensor {
  const t = new Tensor(data, shape, true);
  t.name = name;
  return t;
}

/** Int32 index tensor (token ids, targets). */
export class IntTensor {
  /** The ids, row-major. */
  readonly data: Int32Array;
  /** The shape, outermost axis first. */
  readonly shape: Shape;
  constructor(data: Int32Array, shape: Shape) {
    checkShape(shape, "IntTensor");
    if (data.length !== sizeOf(shape)) {
      throw new Error(
        `IntTensor: data has ${data.length} elements but shape ${shapeStr(shape)} needs ${sizeOf(shape)}`,
      );
    }
    this.data = data;
    this.shape = Object.freeze([...shape]);
  }
  /** The number of ids. */
  get size(): number {
    return this.data.length;
  }
}

/**
 * An int32 tensor (token ids, targets) from `values`, shaped `shape` (default 1-D); errors when
 * they do not fill it.
 */
export function intTensor(values: ArrayLike<number>, shape?: Shape): IntTensor {
  const s = shape ?? [values.length];
  const data = new Int32Array(sizeOf(s));
  if (values.length !== data.length) {
    throw new Error(`intTensor: ${values.length} values do not fill shape ${shapeStr(s)}`);
  }
  data.set(values);
  return new IntTensor(data, s);
}
