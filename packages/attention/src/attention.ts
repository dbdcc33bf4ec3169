/*
 * Causal grouped-query attention, tiled FlashAttention-2 kernel as a fused op (docs/model.md §4):
 *   q [B, T, Hq, hd], k, v [B, T, Hkv, hd] → y [B, T, Hq, hd]; query head j uses KV head
 *   floor(j·Hkv/Hq); y[t,j] = softmax_{s ≤ t}(q[t,j]·k[s]/sqrt(hd)) · v[s].
 * Forward in attention-forward.ts, backward in attention-backward.ts. The op saves q, k, v, y
 * and the per-row log-sum-exp lse [B, Hq, T]: memory is linear in T, no [T, T] matrix exists.
 * With a thread pool, (batch, KV head) units run in parallel. The native kernels
 * (native/attention.c, when registered) read ordinary memory: nothing is staged for them.
 */
import type { Tensor } from "@loop/tensor";
import {
  allocF32,
  allocF32Uninit,
  documentStarts,
  kernelSet,
  record1,
  shareable,
} from "@loop/tensor/kernel";
import { flashBackward } from "./attention-backward.js";
import { type FlashForwardArgs, flashForward } from "./attention-forward.js";
import { attentionDims } from "./attention-shapes.js";

/** Tiling and document boundaries of the causal attention kernel. */
export interface AttentionOptions {
  /** Query rows per tile (default 96). */
  blockQ?: number;
  /** Key columns per tile (default 96). */
  blockK?: number;
  /**
   * Packed documents: [B·T] document index per position (mamba_ssm's seq_idx, non-decreasing
   * along a row); a query attends only to keys of its own document. Absent: one per row.
   */
  seqIdx?: Int32Array | null;
}

/** FlashForwardArgs.starts for the options: the document starts, or an empty array. */
export function startsFor(opts: AttentionOptions, B: number, T: number): Float32Array {
  return opts.seqIdx ? shareable(documentStarts(opts.seqIdx, B, T)) : allocF32(0);
}

const DEFAULT_BLOCK = 96;

export function blockSize(value: number | undefined, name: string): number {
  const b = value ?? DEFAULT_BLOCK;
  if (!Number.isInteger(b) || b <= 0) {
    throw new Error(`attention: ${name} must be a positive integer, got ${value}`);
  }
  return b;
}

/** Inputs of the portable kernel `kernel` ("flashFwd" / "flashBwd") staged for the pool. */
function staged(a: Float32Array, kernel: "flashFwd" | "flashBwd"): Float32Array {
  return kernelSet("attention")?.[kernel] ? a : shareable(a);
}

/**
 * Causal grouped-query attention with the tiled kernel (fused op with backward). Tile sizes
 * change only the order of floating-point operations, not the result.
 */
export function attention(q: Tensor, k: Tensor, v: Tensor, opts: AttentionOptions = {}): Tensor {
  const d = attentionDims(q, k, v, "attention");
  const blockQ = blockSize(opts.blockQ, "blockQ");
  const blockK = blockSize(opts.blockK, "blockK");
  const y = allocF32Uninit(q.size); // every row of y and lse is written
  const lse = allocF32Uninit(d.B * d.Hq * d.T);
  const [qd, kd, vd] = [q.data, k.data, v.data].map((a) => staged(a, "flashFwd")) as [
    Float32Array,
    Float32Array,
    Float32Array,
  ];
  const starts = startsFor(opts, d.B, d.T);
  const fwd: FlashForwardArgs = { ...d, q: qd, k: kd, v: vd, y, lse, blockQ, blockK, starts };
  flashForward(fwd);
  return record1("attention", [q, k, v], y, q.shape, ([gy], needs) => {
    // Unneeded gradients are allocated but not computed (tiny next to the work saved). The
    // native kernel writes every element of those it computes; the portable one accumulates.
    const alloc = kernelSet("attention")?.flashBwd ? allocF32Uninit : allocF32;
    const dq = alloc(q.size);
    const dk = alloc(k.size);
    const dv = alloc(v.size);
    flashBackward({
      ...fwd,
      gy: staged(gy!, "flashBwd"),
      dq,
      dk,
      dv,
      needQ: needs[0]!,
      needK: needs[1]!,
      needV: needs[2]!,
    });
    return [needs[0] ? dq : null, needs[1] ? dk : null, needs[2] ? dv : null];
  });
}
