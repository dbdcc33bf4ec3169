/*
 * The device tape's vocabulary (device-tape.ts): a recorded node, what the tape reads and writes
 * of a backend's tensor, the backend's memory operations, a gradient's destination and the
 * options of one walk.
 */

/** A recorded op: its inputs, its outputs and the backward of its input gradients. */
export interface DeviceNode<T> {
  readonly name: string;
  readonly inputs: readonly T[];
  readonly outputs: readonly T[];
  /** Gradients of the inputs (null where none) from those of the outputs (null: zero). */
  backward(gradOutputs: readonly (T | null)[]): (T | null)[];
}

/** What the tape reads and writes on a backend's tensor. */
export interface TapeTensor<T> {
  /** A serial number: tensors made later have larger ids. */
  readonly id: number;
  readonly shape: readonly number[];
  readonly size: number;
  /** Kept across steps (parameters, their gradients): never given back by the walk. */
  readonly persistent: boolean;
  /** Whether its block already went back. */
  readonly released: boolean;
  /** The tensor whose block this one views, or null when it owns its block. */
  readonly base: T | null;
  /** Records a gradient path (an input of a recorded op needs a gradient). */
  requiresGrad: boolean;
  /** The recorded op that produced it (null: a leaf). */
  node: DeviceNode<T> | null;
  /** A leaf's persistent gradient block. */
  grad: T | null;
  /**
   * Whether `grad` holds this step's gradient (false: the next contribution overwrites it). A
   * backend whose zeroing gives the blocks back may derive it (`grad !== null`) and ignore sets.
   */
  gradLive: boolean;
}

/** The backend's memory operations the walk uses. */
export interface TapeMemory<T> {
  /** The id the next tensor made will get. */
  nextId(): number;
  /** An uninitialised tensor of `like`'s shape, on its device (persistent: a leaf's gradient). */
  empty(like: T, persistent: boolean): T;
  /** dst ← src (same size). */
  copyInto(dst: T, src: T): void;
  /** dst ← dst + src (same size). */
  addInto(dst: T, src: T): void;
  /** A fresh tensor holding a + b. */
  add(a: T, b: T): T;
  /** Give `t`'s block back now. */
  dispose(t: T): void;
  /** Whether leaf `t` gathers a gradient (a trainable parameter). */
  gathers(t: T): boolean;
  /**
   * Give back the transient tensors made since id `mark` on the device of `on`, except those of
   * `keep` and the blocks they view: a node's scratch after its backward, a checkpointed call's
   * intermediates.
   */
  releaseSince?(mark: number, keep: readonly T[], on: T): void;
  /** A recorded backward reads `t`'s values (the backend may free what none reads). */
  keep?(t: T): void;
}

/** Where an op's backward writes an input's gradient: `out`, added to when `acc`. */
export interface GradTarget<T> {
  out: T;
  acc: boolean;
}

/** Options of one walk. */
export interface WalkOptions<T> {
  /**
   * Leaves the walk ends at: their gradients are returned (transient), not gathered into
   * `grad` (activation checkpointing's stand-in for its input).
   */
  wrt?: readonly T[];
  /** Give intermediate gradients back as they are consumed (default true). */
  releaseGrads?: boolean;
  /** Give a node's outputs back once its backward has run (default false). */
  releaseOutputs?: boolean;
  /** Give each node's scratch back after its backward (`TapeMemory.releaseSince`; default false). */
  releaseScratch?: boolean;
  /**
   * The nodes in recording order (a topological order); by default those reached from the
   * root, found by a walk over the inputs.
   */
  nodes?: readonly DeviceNode<T>[];
}
