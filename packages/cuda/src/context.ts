/*
 * A CUDA context of the backend: the device, its caching allocator, the GEMM precision, the
 * tape, the transient tensors of the current step and the per-kernel launch counts (the launch
 * plan that tests pin). Ops are written against it: `run` packs a launch's arguments (tensors
 * become their addresses) and enqueues it; `gemm` runs a product on cuBLASLt or on the own
 * kernels at the context's precision, with the bf16 operand copies it keeps.
 */

import { DeviceTape } from "@loop/tensor/kernel";
import { CachingAllocator } from "./caching-allocator.js";
import { CudaTensor, type DType, nextTensorId } from "./cuda-tensor.js";
import { type CudaDevice, type Dim3, packArgs } from "./device.js";
import type { KernelName } from "./kernel-table.js";
import { type CudaPrecision, gemmPath } from "./precision.js";

/** Grid, block and dynamic shared memory of a launch. */
export interface LaunchShape {
  grid: Dim3;
  block: Dim3;
  shared: number;
}

/** A kernel argument: a tensor (its address), null (a null pointer) or a scalar. */
export type KernelArg = CudaTensor | null | number;

/** A GEMM C[M,N] = alpha·op(A)·op(B) + beta·C on row-major tensors (strides of their rows). */
export interface GemmArgs {
  transA: boolean;
  transB: boolean;
  M: number;
  N: number;
  K: number;
  a: CudaTensor;
  b: CudaTensor;
  c: CudaTensor;
  alpha?: number;
  beta?: number;
}

/** Options of a context. */
export interface CudaContextOptions {
  /** The GEMMs' precision (default fp32). */
  precision?: CudaPrecision;
}

const MAX_GRID = 65535 * 32;

/** See the file comment. */
export class CudaContext {
  /** The device-memory pool every tensor of this context takes its block from. */
  readonly allocator: CachingAllocator;
  /** The GEMMs' precision (`CudaContextOptions.precision`). */
  readonly precision: CudaPrecision;
  /** The tape: recorded ops since the last backward or release, and the backward walk. */
  readonly tape: DeviceTape<CudaTensor>;
  private readonly transients = new Set<CudaTensor>();
  private readonly launches = new Map<string, number>();
  private readonly bf16Copies = new WeakMap<CudaTensor, { copy: CudaTensor; version: number }>();
  private casts = 0;
  /** GEMM shapes cuBLASLt refused (they run on the own kernels). */
  private readonly ltRefused = new Set<string>();

  constructor(
    readonly device: CudaDevice,
    o: CudaContextOptions = {},
  ) {
    this.allocator = new CachingAllocator(device);
    this.precision = o.precision ?? "fp32";
    this.tape = new DeviceTape<CudaTensor>(
      {
        nextId: nextTensorId,
        empty: (like, persistent) => this.empty(like.shape, "f32", persistent),
        copyInto: (dst, src) => this.copyInto(dst, src),
        addInto: (dst, src) => this.axpy(1, src, 1, dst),
        add: (a, b) => {
          const sum = this.empty(a.shape);
          this.run("binary_bcast", this.elems(a.size), [a.size, a.size, 0, a, b, sum]);
          return sum;
        },
        dispose: (t) => this.dispose(t),
        gathers: (t) => t.trainable,
        releaseSince: (mark, keep) => this.releaseTransientsSince(mark, keep),
      },
      true,
    );
  }

  /** Whether ops are put on the tape (false inside a no-grad region). */
  get recording(): boolean {
    return this.tape.recording;
  }

  /** Called by every tensor that owns a block: transients are released with the step. */
  adopt(t: CudaTensor): void {
    if (!t.persistent) this.transients.add(t);
  }

  /** A tensor of `shape`, uninitialised. */
  empty(shape: readonly number[], dtype: DType = "f32", persistent = false): CudaTensor {
    return new CudaTensor(this, shape, dtype, persistent);
  }

  /** A tensor of zeros. */
  zeros(shape: readonly number[], persistent = false): CudaTensor {
    const t = this.empty(shape, "f32", persistent);
    this.device.zero(t.ptr, t.bytes);
    return t;
  }

  /** A tensor holding `v` everywhere. */
  full(shape: readonly number[], v: number): CudaTensor {
    const t = this.empty(shape);
    this.run("fill", this.elems(t.size), [t.size, v, t]);
    return t;
  }

  /** A view of `t`'s block as `shape` from element `offset` (no copy). */
  view(t: CudaTensor, shape: readonly number[], offset = 0): CudaTensor {
    const size = shape.reduce((a, b) => a * b, 1);
    if (offset + size > t.size)
      throw new Error(`cuda: a view [${shape}] at ${offset} exceeds [${t.shape}]`);
    const bytes = offset * (t.dtype === "bf16" ? 2 : 4);
    return new CudaTensor(
      this,
      shape,
      t.dtype,
      t.persistent,
      t.owner,
      (t.base ? t.byteOffset : 0) + bytes,
    );
  }

  /** Copy all of `src` into `dst` (same size). */
  copyInto(dst: CudaTensor, src: CudaTensor): void {
    this.device.copy(dst.ptr, src.ptr, src.bytes);
  }

  /** y ← beta·y + alpha·x. */
  axpy(alpha: number, x: CudaTensor, beta: number, y: CudaTensor): void {
    this.run("axpy", this.elems(y.size), [y.size, alpha, x, beta, y]);
  }

  /** Run `fn` with recording set to `on`. */
  withRecording<R>(on: boolean, fn: () => R): R {
    return this.tape.withRecording(on, fn);
  }

  /** A grid-stride launch over n elements. */
  elems(n: number, threads = 256): LaunchShape {
    return {
      grid: [Math.max(1, Math.min(MAX_GRID, Math.ceil(n / threads))), 1, 1],
      block: [threads, 1, 1],
      shared: 0,
    };
  }

  /** One block of `threads` per row (grid rows × ys). */
  rows(rows: number, threads = 256, ys = 1, shared = 0): LaunchShape {
    return { grid: [rows, ys, 1], block: [threads, 1, 1], shared };
  }

  /** Enqueue `kernel`; tensors travel as their addresses. */
  run(kernel: KernelName, shape: LaunchShape, args: readonly KernelArg[]): void {
    const max = this.device.maxSharedBytes;
    if (max !== undefined && shape.shared > max)
      throw new Error(
        `cuda: ${kernel} needs ${shape.shared} bytes of shared memory per block, the GPU allows ${max}`,
      );
    const packed = packArgs(
      kernel,
      args.map((a) => (a === null ? 0 : typeof a === "number" ? a : a.ptr)),
    );
    this.device.launch(kernel, shape.grid, shape.block, shape.shared, packed);
    this.launches.set(kernel, (this.launches.get(kernel) ?? 0) + 1);
  }

  /**
   * The bf16 copy of `t` for a GEMM operand: made once per version of `t` (see precision.ts);
   * persistent like `t`.
   */
  bf16(t: CudaTensor): CudaTensor {
    const hit = this.bf16Copies.get(t);
    if (hit && hit.version === t.version && !hit.copy.released) return hit.copy;
    // a stale copy's block takes the new values (an updated weight: no allocation per step)
    const copy = hit && !hit.copy.released ? hit.copy : this.empty(t.shape, "bf16", t.persistent);
    this.run("cast_bf16", this.elems(t.size), [t.size, t, copy]);
    this.casts++;
    this.bf16Copies.set(t, { copy, version: t.version });
    return copy;
  }

  /** Forget `t`'s bf16 copy (t is being released). */
  dropCopies(t: CudaTensor): void {
    const hit = this.bf16Copies.get(t);
    if (hit) hit.copy.releaseStorage();
    this.bf16Copies.delete(t);
  }

  /** C = alpha·op(A)·op(B) + beta·C at the context's precision. */
  gemm(g: GemmArgs): void {
    const { transA, transB, M, N, K } = g;
    const alpha = g.alpha ?? 1;
    const beta = g.beta ?? 0;
    if (M === 0 || N === 0) return;
    const path = gemmPath(this.precision);
    const a = path.operand === "bf16" ? this.bf16(g.a) : g.a;
    const b = path.operand === "bf16" ? this.bf16(g.b) : g.b;
    const lda = transA ? M : K;
    const ldb = transB ? K : N;
    const lt = this.device.ltGemm;
    const shape = `${transA}${transB}${M},${N},${K}`;
    if (lt && !this.ltRefused.has(shape)) {
      if (
        lt({ transA, transB, M, N, K, alpha, a: a.ptr, b: b.ptr, beta, c: g.c.ptr, ...path.lt })
      ) {
        this.launches.set("gemm_lt", (this.launches.get("gemm_lt") ?? 0) + 1);
        return;
      }
      // cuBLASLt has no algorithm for this shape and layout (odd leading dimensions under
      // bf16): the own kernel computes it, now and for the rest of the run
      this.ltRefused.add(shape);
    }
    this.run(
      path.kernel,
      {
        grid: [Math.ceil(N / 64), Math.ceil(M / 64), 1],
        block: [path.kernel === "gemm_f32" ? 256 : 128, 1, 1],
        shared: 0,
      },
      [transA ? 1 : 0, transB ? 1 : 0, M, N, K, alpha, a, lda, b, ldb, beta, g.c, N],
    );
  }

  /**
   * Give every block this context holds back to the device — its tensors, persistent ones
   * included, and the allocator's cache — when the model it ran is done: a later context on the
   * same device starts from empty memory. Tensors of this context must not be used after.
   */
  release(): void {
    for (const t of this.transients) this.dropCopies(t);
    this.transients.clear();
    this.tape.clear();
    this.allocator.releaseAll();
  }

  /** Release every transient tensor except those of `keep` (and the blocks they view). */
  releaseTransients(keep: readonly CudaTensor[] = []): void {
    const kept = new Set(keep.map((t) => t.owner));
    for (const t of this.transients) {
      if (kept.has(t)) continue;
      this.dropCopies(t);
      t.releaseStorage();
      this.transients.delete(t);
    }
    this.tape.clear();
  }

  /**
   * Release the transient tensors made since tensor id `first` (a checkpointed call's
   * intermediates) except those of `keep` (and the blocks they view).
   */
  releaseTransientsSince(first: number, keep: readonly CudaTensor[] = []): void {
    const kept = new Set(keep.map((t) => t.owner));
    for (const t of this.transients) {
      if (t.id < first || kept.has(t)) continue;
      this.dropCopies(t);
      t.releaseStorage();
      this.transients.delete(t);
    }
  }

  /** Release `t` now (and its gradient and bf16 copy). */
  dispose(t: CudaTensor): void {
    if (t.grad) this.dispose(t.grad);
    t.grad = null;
    t.gradLive = false;
    this.dropCopies(t);
    if (!t.base) {
      t.releaseStorage();
      this.transients.delete(t);
    }
  }

  /** Launches per kernel since the last reset (GEMMs on cuBLASLt under `gemm_lt`). */
  launchCounts(): Map<string, number> {
    return new Map(this.launches);
  }

  /** bf16 operand casts since the last reset. */
  castCount(): number {
    return this.casts;
  }

  /** Zero the launch and bf16-cast counters. */
  resetCounters(): void {
    this.launches.clear();
    this.casts = 0;
  }
}
