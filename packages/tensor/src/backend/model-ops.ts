/*
 * What a compute backend provides for the model's training forward (docs/architecture.md): the
 * differentiable ops of docs/model.md at the CPU's granularity, fused ones included, generic in
 * the backend's float tensor `T` and int tensor `I` (token ids, targets, document indices), plus
 * the transfers between the host and the backend. The model, the exit gate and the per-step
 * outputs are written once against it (`@loop/looped`'s `loopedForward`, `toDevice`); each
 * backend implements the ops with its own kernels and may fuse more behind the same op, never
 * restate the model. Every op records its backward on the backend's tape while gradients are
 * enabled (`noGrad` turns that off).
 *
 * The interface is the union of one slice per concern, so a generic function asks only for the
 * slice it uses and a package can implement its slice beside its kernels (the CPU's Mamba-2 ops
 * in `@loop/ssm-kernels`, attention in `@loop/attention`, the exit gate in `@loop/exit-gate`).
 */
import type {
  GateLike,
  ProjectedAttentionOptions,
  SsdOptions,
  SsdResult,
  Stage1Options,
  Stage2Options,
} from "./op-options.js";

/**
 * How a backend holds an uploaded tensor: kept (a parameter) or transient, and whether it gathers a
 * gradient.
 */
export interface UploadOptions {
  /** Kept until disposed (parameters); otherwise released by `releaseTransients`. */
  persistent?: boolean;
  /** A leaf that gathers a gradient. */
  requiresGrad?: boolean;
}

/** Moving values between the host and the backend, and its tape and memory switches. */
export interface TransferOps<T, I> {
  /** A float tensor with these values (row-major). */
  upload(data: Float32Array, shape: readonly number[], opts?: UploadOptions): T;
  /** An int tensor (token ids, targets, document indices). */
  uploadInt(data: Int32Array, shape: readonly number[]): I;
  /** The values of `t` on the host (waits for the backend). */
  read(t: T): Promise<Float32Array>;
  /** Overwrite the values of `t` in place (same size): the tensor, and what holds it, stay. */
  write(t: T, data: Float32Array): void;
  /** Release `t` (and its gradient) now, persistent or not. */
  dispose(t: T): void;
  shapeOf(t: T | I): readonly number[];
  /** `fn` with recording off: no tape, no gradients. */
  noGrad<R>(fn: () => R): R;
  /** Give back every non-persistent tensor made so far except `keep` (a no-op on the CPU). */
  releaseTransients(keep?: readonly T[]): void;
}

/** The general ops (`@loop/tensor`'s of the same names). */
export interface TensorOps<T, I> {
  /** ids [...S] → rows of w [V, D]: [...S, D]. */
  embedding(ids: I, w: T): T;
  /** x [..., D] · w [D] / rms(x). */
  rmsnorm(x: T, w: T, eps: number): T;
  add(a: T, b: T): T;
  /** x [..., K] · wᵀ, w [N, K]. */
  linear(x: T, w: T): T;
  /** linear(x, w) cut along the last axis into pieces of `widths`. */
  linearSplit(x: T, w: T, widths: readonly number[]): T[];
  /**
   * linear(x, w) for each of `ws` (one input, several weights: a backend may run them as one
   * product). Optional: callers fall back to one `linear` per weight, as the CPU does.
   */
  linears?(x: T, ws: readonly T[]): T[];
  reshape(x: T, shape: readonly number[]): T;
  /**
   * The forward reads `x` no more: a backend may free what no backward needs of it (WebGPU
   * under mixed precision: a norm's output that only projections read, which keep f16 copies).
   * A hint that changes no number; optional.
   */
  done?(x: T): void;
  exp(x: T): T;
  neg(x: T): T;
  sigmoid(x: T): T;
  /** Mean cross-entropy of logits [..., V] over the targets ≠ IGNORE_INDEX: [1]. */
  crossEntropy(logits: T, targets: I): T;
}

/** The Mamba-2 mixer's fused ops (`@loop/ssm-kernels`'s of the same names). */
export interface Mamba2Ops<T, I> {
  /** silu(causal depthwise conv(x)) cut into `widths`; `init` the conv history, `seqIdx` resets. */
  causalConv1dSiluSplit(
    x: T,
    w: T,
    b: T,
    init: T | null,
    widths: readonly number[],
    seqIdx: I | null,
  ): T[];
  /**
   * clamp(softplus(raw + bias), lo, hi) with `limit` [lo, hi] (null: the softplus alone); the
   * gradient is zero where the softplus lies outside the limits.
   */
  softplusBias(raw: T, bias: T, limit: readonly [number, number] | null): T;
  /** −exp(x): the SSM's decay rates A from their logs (one fused op where a device has it). */
  negExp(x: T): T;
  /** The chunked SSD scan, D skip fused. */
  ssdScanChunked(x: T, dt: T, A: T, B: T, C: T, opts: SsdOptions<T, I>): SsdResult<T>;
  /** rmsnorm over `groups` groups of y ⊙ silu(z), times w. */
  gatedRmsnorm(y: T, z: T, w: T, groups: number, eps: number): T;
}

/** The attention mixer's and the MLP's fused ops (`@loop/attention`'s of the same names). */
export interface AttentionOps<T, I> {
  /** y [B,T,Hq·hd] = causal GQA attention of RoPE(u·wqᵀ), RoPE(u·wkᵀ), u·wvᵀ. */
  projectedAttention(u: T, wq: T, wk: T, wv: T, opts: ProjectedAttentionOptions<I>): T;
  /** silu(gate) ⊙ up. */
  swiglu(gate: T, up: T): T;
}

/** The exit gate's ops (`@loop/exit-gate`'s of the same names; docs/exit-gate.md). */
export interface ExitGateOps<T, I> {
  /** a [R, ...S] from readouts R × [...S, D], weight [1, D], bias [1]. */
  gateLogits(readouts: readonly T[], weight: T, bias: T): T;
  /** p(r) [R, ...S] from gate logits a [R, ...S]. */
  exitPdf(gateLogits: T): T;
  /** The stage-1 objective L1 (into the gate logits and the per-step logits). */
  stage1Loss(gateLogits: T, logitsPerStep: readonly T[], targets: I, opts?: Stage1Options): T;
  /** The stage-2 objective L2 (into the gate only: readouts detached, per-step losses constant). */
  stage2Loss(
    gate: GateLike<T>,
    readouts: readonly T[],
    logitsPerStep: readonly T[],
    targets: I,
    opts?: Stage2Options,
  ): T;
}

/** Every op of the model's training forward on one backend (see the file comment). */
export interface ModelOps<T, I>
  extends TransferOps<T, I>,
    TensorOps<T, I>,
    Mamba2Ops<T, I>,
    AttentionOps<T, I>,
    ExitGateOps<T, I> {
  /**
   * Activation checkpointing: `fn(x)` run without keeping its intermediate activations, which
   * the backward recomputes; `params` are the trainable leaves `fn` reads besides `x`. Absent
   * where the backend does not offer it (the CPU model has its own, `LoopedModel.forward`).
   */
  checkpoint?(fn: (x: T) => T, x: T, params: readonly T[]): T;
}
