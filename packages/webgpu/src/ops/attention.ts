/*
 * Causal grouped-query attention on GPU tensors, as @loop/attention's `attention`:
 *   q [B, T, Hq, hd], k, v [B, T, Hkv, hd] → y [B, T, Hq, hd]; the op saves y and the per-row
 * log-sum-exp (memory linear in T; no [T, T] matrix exists). Kernels: kernels/attention.ts.
 */
import type { GpuContext } from "../gpu-context.js";
import { emptyLike, GpuTensor } from "../gpu-tensor.js";
import { grid, groups } from "../kernel-def.js";
import { ATTN_ROWS, attentionKernels, DVEC_GROUP, dvecKernel } from "../kernels/attention.js";
import { recordGpu } from "../tape.js";

/**
 * Options of the GPU attention op: packed documents (the tile options of the CPU op are rejected).
 */
export interface AttentionOptions {
  /**
   * Packed documents: an i32 tensor of B·T document indices (mamba_ssm's seq_idx, non-decreasing
   * along a row, which the caller checks: the device does not); a query attends only to keys of
   * its own document. Absent: one document per row.
   */
  seqIdx?: GpuTensor | null;
  /** The CPU kernel's tile sizes; the WGSL kernel sizes its tiles itself (rejected). */
  blockQ?: number;
  blockK?: number;
}

const shapeOf = (t: GpuTensor) => `[${t.shape.join(",")}]`;

function dims(q: GpuTensor, k: GpuTensor, v: GpuTensor) {
  const op = "webgpu attention";
  if (q.rank !== 4) throw new Error(`${op}: q must be [B, T, Hq, hd], got ${shapeOf(q)}`);
  const [B, T, Hq, hd] = q.shape as [number, number, number, number];
  if (k.rank !== 4 || k.shape[0] !== B || k.shape[1] !== T || k.shape[3] !== hd)
    throw new Error(
      `${op}: k must be [${B}, ${T}, Hkv, ${hd}] to match q ${shapeOf(q)}, got ${shapeOf(k)}`,
    );
  const Hkv = k.shape[2]!;
  if (v.rank !== 4 || v.shape.some((d, i) => d !== k.shape[i]))
    throw new Error(`${op}: v must have k's shape ${shapeOf(k)}, got ${shapeOf(v)}`);
  if (Hkv === 0 || Hq % Hkv !== 0)
    throw new Error(`${op}: query heads Hq=${Hq} must be a multiple of KV heads Hkv=${Hkv}`);
  if (hd === 0) throw new Error(`${op}: head_dim must be positive, got ${hd}`);
  return { B, T, Hq, Hkv, hd, G: Hq / Hkv };
}

/** A one-element i32 buffer bound in place of seq when there are no documents. */
const noDocs = new WeakMap<GpuContext, GpuTensor>();
function seqBuffer(ctx: GpuContext, seqIdx: GpuTensor | null | undefined, B: number, T: number) {
  if (seqIdx) {
    if (seqIdx.dtype !== "i32" || seqIdx.size !== B * T)
      throw new Error(
        `webgpu attention: seqIdx must be an i32 tensor of B·T = ${B * T} values, got ${seqIdx.dtype} ${shapeOf(seqIdx)}`,
      );
    return seqIdx;
  }
  let t = noDocs.get(ctx);
  if (!t || t.released) {
    t = new GpuTensor(ctx, [1], { dtype: "i32", persistent: true }); // never read (docs = 0)
    noDocs.set(ctx, t);
  }
  return t;
}

/** Causal GQA attention (differentiable in q, k and v). */
export function attention(
  q: GpuTensor,
  k: GpuTensor,
  v: GpuTensor,
  opts: AttentionOptions = {},
): GpuTensor {
  for (const name of ["blockQ", "blockK"] as const)
    if (opts[name] !== undefined)
      throw new Error(
        `webgpu attention: option ${name} is not supported (the WGSL kernel sizes its tiles from head_dim and the device)`,
      );
  const { B, T, Hq, Hkv, hd, G } = dims(q, k, v);
  const ctx = q.ctx;
  const ks = attentionKernels(hd, ctx.device.limits.maxComputeWorkgroupStorageSize);
  const seq = seqBuffer(ctx, opts.seqIdx, B, T);
  const params = { T, Hq, Hkv, G, c: 1 / Math.sqrt(hd), docs: opts.seqIdx ? 1 : 0 };
  const y = emptyLike(ctx, q.shape);
  // [lse | Dvec]: the forward writes lse, the backward Dvec
  const ld = emptyLike(ctx, [2, B, Hq, T]);
  const tiles = groups(T, ATTN_ROWS);
  ctx.run(ks.forward, { q, k, v, seq, y, lse: ld }, params, [tiles, B * Hq, 1]);
  recordGpu("attention", [q, k, v], [y], ([gy]) => {
    const nl = B * Hq * T;
    const common = {
      q: q.buffer,
      k: k.buffer,
      v: v.buffer,
      seq: seq.buffer,
      ld: ld.buffer,
      gy: gy!.buffer,
    };
    // dQ first: it writes Dvec beside lse for the dK dV kernel (the dvec pass only without it)
    let dq: GpuTensor | null = null;
    if (q.requiresGrad) {
      dq = emptyLike(ctx, q.shape);
      ctx.run(ks.backwardQ, { ...common, y, dq }, { ...params, nl }, [tiles, B * Hq, 1]);
    } else if (k.requiresGrad || v.requiresGrad)
      ctx.run(dvecKernel, { y, gy: gy!, ld }, { n: nl, T, Hq, hd }, grid(nl, DVEC_GROUP));
    let dk: GpuTensor | null = null;
    let dv: GpuTensor | null = null;
    if (k.requiresGrad || v.requiresGrad) {
      dk = emptyLike(ctx, k.shape);
      dv = emptyLike(ctx, v.shape);
      ctx.run(ks.backwardKV, { ...common, dk, dv }, { ...params, nl }, [tiles, B * Hkv, 1]);
    }
    return [dq, k.requiresGrad ? dk : null, v.requiresGrad ? dv : null];
  });
  return y;
}
