/*
 * The kernels a compute backend provides for the model's training forward (docs/backends.md):
 * the differentiable kernels of docs/model.md, generic in the backend's float tensor `T` and int
 * tensor `I` (token ids, targets, document indices), plus the transfers between the host and the
 * backend. Nothing here is model logic: the model, the exit gate's ops and objectives, projected
 * attention and cross-entropy are written once over these kernels (@loop/looped `toDevice`,
 * @loop/exit-gate, @loop/attention, `crossEntropyOn`), and the tape that records each kernel's
 * backward is written once too (@loop/tensor `deviceAutograd`, `AutogradOps`). A backend may
 * register a fused kernel for a composite (the optional members; `BackendCapabilities.fused`),
 * never a second definition.
 *
 * The interface is the union of one slice per concern, so a generic function asks only for the
 * slice it uses and a package can implement its slice beside its kernels (the CPU's Mamba-2 ops
 * in `@loop/ssm-kernels`, attention in `@loop/attention`).
 */
import type { ProjectedAttentionOptions, SsdOptions, SsdResult } from "./op-options.js";
import type { RopeOptions } from "./rope-tables.js";

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

/** Moving values between the host and the backend, and its memory switch. */
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
  /** Give back every non-persistent tensor made so far except `keep` (a no-op on the CPU). */
  releaseTransients(keep?: readonly T[]): void;
}

/** The elementwise one-input kernels (`TensorOps.unary`). */
export const UNARY_KINDS = ["exp", "neg", "sigmoid", "logsigmoid", "relu", "negExp"] as const;
/**
 * exp(x), −x, sigmoid(x), logsigmoid(x) = −softplus(−x) (exact for any |x|), max(x, 0) (gradient
 * 0 at x ≤ 0), −exp(x) (the SSM's decay rates A from their logs).
 */
export type UnaryKind = (typeof UNARY_KINDS)[number];

/** The elementwise two-input kernels (`TensorOps.binary`). */
export const BINARY_KINDS = ["add", "sub", "mul"] as const;
/** a + b, a − b, a ⊙ b. */
export type BinaryKind = (typeof BINARY_KINDS)[number];

/**
 * The general kernels (`@loop/tensor`'s ops of the same meaning). The composites above them —
 * cross-entropy, a linear cut into pieces, the exit gate's ops and objectives, projected
 * attention — are written once over these (`crossEntropyOn`, `linearSplitOn`, @loop/exit-gate,
 * @loop/attention).
 */
export interface TensorOps<T, I> {
  /** ids [...S] → rows of w [V, D]: [...S, D]. */
  embedding(ids: I, w: T): T;
  /** x [..., D] · w [D] / rms(x). */
  rmsnorm(x: T, w: T, eps: number): T;
  /** x [..., K] · wᵀ, w [N, K]. */
  linear(x: T, w: T): T;
  /**
   * linear(x, w) for each of `ws` (one input, several weights: a backend may run them as one
   * product). Optional fused composite: callers fall back to one `linear` per weight.
   */
  linears?(x: T, ws: readonly T[]): T[];
  /**
   * linear(x, w) cut along the last axis into pieces of `widths`. Optional fused composite
   * (`linearSplitOn` is its definition: `split(linear(x, w), widths, -1)`); a backend registers
   * it where the product's block can go back at once (CUDA, WebGPU: memory).
   */
  linearSplit?(x: T, w: T, widths: readonly number[]): T[];
  reshape(x: T, shape: readonly number[]): T;
  /**
   * The forward reads `x` no more: a backend may free what no backward needs of it (WebGPU
   * under mixed precision: a norm's output that only projections read, which keep f16 copies).
   * A hint that changes no number; optional.
   */
  done?(x: T): void;
  /** An elementwise one-input kernel (UnaryKind). */
  unary(kind: UnaryKind, x: T): T;
  /**
   * An elementwise two-input kernel (BinaryKind): b of a's shape or of a trailing part of it
   * (broadcast over the leading axes; b's gradient summed over them).
   */
  binary(kind: BinaryKind, a: T, b: T): T;
  /** x·scale + shift, elementwise (scale and shift constants). */
  affine(x: T, scale: number, shift: number): T;
  /** Cut `x` along its first (`axis` 0) or last (−1) axis into pieces of `sizes`. */
  split(x: T, sizes: readonly number[], axis: 0 | -1): T[];
  /** Join `xs` along the first (0) or last (−1) axis (the other axes equal); split's inverse. */
  concat(xs: readonly T[], axis: 0 | -1): T;
  /**
   * Per-token cross-entropy of logits [...S, V] against targets [...S]: [...S], 0 where the
   * target is IGNORE_INDEX (and no gradient there).
   */
  ceRows(logits: T, targets: I): T;
  /**
   * Σ x over the positions whose target ≠ IGNORE_INDEX, divided by their count N: [1]; x of
   * targets' size; NaN (zero gradient) when N = 0.
   */
  maskedMean(x: T, targets: I): T;
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
  /** The chunked SSD scan, D skip fused. */
  ssdScanChunked(x: T, dt: T, A: T, B: T, C: T, opts: SsdOptions<T, I>): SsdResult<T>;
  /** rmsnorm over `groups` groups of y ⊙ silu(z), times w. */
  gatedRmsnorm(y: T, z: T, w: T, groups: number, eps: number): T;
}

/** Causal attention's options (`AttentionOps.attention`). */
export interface AttentionKernelOptions<I> {
  /** Packed documents: [B·T] document index per position (a query sees its own document only). */
  seqIdx?: I | null;
}

/**
 * The attention mixer's and the MLP's kernels (`@loop/attention`'s of the same names); projected
 * attention is written once over them (@loop/attention `projectedAttentionOn`).
 */
export interface AttentionOps<T, I> {
  /** RoPE (rotate-half) of each x [B, T, H, hd] of `xs` at positions offset..offset+T−1. */
  rope(xs: readonly T[], opts: RopeOptions): T[];
  /** Causal GQA attention, scale 1/√hd: q [B,T,Hq,hd], k, v [B,T,Hkv,hd] → [B,T,Hq,hd]. */
  attention(q: T, k: T, v: T, opts: AttentionKernelOptions<I>): T;
  /** silu(gate) ⊙ up. */
  swiglu(gate: T, up: T): T;
  /**
   * y [B,T,Hq·hd] = attention(RoPE(u·wqᵀ), RoPE(u·wkᵀ), u·wvᵀ). Optional fused composite
   * (@loop/attention `projectedAttentionOn` is its definition): the CPU registers its own, which
   * packs the three projections and rotates in place.
   */
  projectedAttention?(u: T, wq: T, wk: T, wv: T, opts: ProjectedAttentionOptions<I>): T;
}

/** Every kernel of the model's training forward on one backend (see the file comment). */
export interface ModelOps<T, I>
  extends TransferOps<T, I>,
    TensorOps<T, I>,
    Mamba2Ops<T, I>,
    AttentionOps<T, I> {}
