/*
 * Attention's decode step over a KV cache on the device (the GPU counterpart of the CPU's
 * @loop/attention `KvCache` + `appendAndAttend` for one token; @loop/tensor DecodeOps
 * `attendStep`). The cache is k, v [S, Hkv, capacity, hd] with keys stored rotated; a token at
 * position `pos`:
 *   kvAppend (kernels/kv-append.ts):  q, k rotated at pos (RoPE, base theta); k, v written at pos;
 *   attentionDecode (kernels/attention-decode.ts): q over positions 0..pos of its row → out.
 * The RoPE angles come from ops/rope.ts's table of `capacity` positions (one per hd, capacity
 * and theta, made once in float64 and read at row pos), so decoding makes no table per token.
 * Inference only: not recorded.
 */
import type { GpuContext } from "../gpu-context.js";
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import { attentionDecodeKernel } from "../kernels/attention-decode.js";
import { KV_APPEND_GROUP, kvAppendKernel } from "../kernels/kv-append.js";
import { getOrMake } from "../memo.js";
import { checkDecodeRows } from "./decode-rows.js";
import { placeholder } from "./optional-inputs.js";
import { ropeTable } from "./rope.js";
import { shapeStr } from "./shape-str.js";

/**
 * A 4-byte buffer per context for the unused writable slot qr (the placeholder cannot take it:
 * it may be bound read-only as rows in the same dispatch).
 */
const spares = new WeakMap<GpuContext, GPUBuffer>();
const spare = (ctx: GpuContext) => getOrMake(spares, ctx, () => ctx.allocBytes(4));

/** One attention layer's KV cache on the device: rotated keys and values [S, Hkv, capacity, hd]. */
export interface GpuKvCache {
  k: GpuTensor;
  v: GpuTensor;
}

/**
 * One token per row at `position`: q [B, Hq, hd] (null: write only), k, v [B, Hkv, hd] as
 * projected; RoPE with base `theta` at `position`, k and v written at `position` of the cache
 * rows `rows` (i32 [B] of distinct rows; null: rows 0..B−1 of a cache of B rows), and q's
 * causal GQA attention (scale 1/√hd) over positions 0..position of its row: [B, Hq, hd], or null
 * without q.
 */
export function attendStep(
  cache: GpuKvCache,
  q: GpuTensor | null,
  k: GpuTensor,
  v: GpuTensor,
  position: number,
  opts: { rows?: GpuTensor | null; theta: number },
): GpuTensor | null {
  const op = "webgpu attendStep";
  if (cache.k.rank !== 4 || shapeStr(cache.v.shape) !== shapeStr(cache.k.shape))
    throw new Error(
      `${op}: the cache's k and v must both be [S,Hkv,capacity,hd], got ${shapeStr(cache.k.shape)} and ${shapeStr(cache.v.shape)}`,
    );
  const [S, Hkv, cap, hd] = cache.k.shape as [number, number, number, number];
  if (hd % 2 !== 0) throw new Error(`${op}: RoPE needs an even head_dim, the cache's is ${hd}`);
  if (k.rank !== 3 || k.shape[1] !== Hkv || k.shape[2] !== hd)
    throw new Error(
      `${op}: k must be [B,${Hkv},${hd}] (the cache's heads), got ${shapeStr(k.shape)}`,
    );
  const B = k.shape[0]!;
  if (shapeStr(v.shape) !== shapeStr(k.shape))
    throw new Error(`${op}: v must be ${shapeStr(k.shape)} like k, got ${shapeStr(v.shape)}`);
  if (q && (q.rank !== 3 || q.shape[0] !== B || q.shape[2] !== hd))
    throw new Error(`${op}: q must be [${B},Hq,${hd}], got ${shapeStr(q.shape)}`);
  const Hq = q ? q.shape[1]! : 0;
  if (q && Hq % Hkv !== 0)
    throw new Error(`${op}: ${Hkv} KV heads do not divide ${Hq} query heads`);
  if (!Number.isInteger(position) || position < 0 || position >= cap)
    throw new Error(`${op}: position ${position} is outside the cache's capacity ${cap}`);
  const rows = opts.rows ?? null;
  checkDecodeRows(op, rows, B, S);
  const ctx = k.ctx;
  const tab = ropeTable(ctx, hd, cap, opts.theta, 0);
  const rowBuf = rows?.buffer ?? placeholder(ctx);
  const hasRows = rows ? 1 : 0;
  const half = hd / 2;
  const qr = q ? emptyLike(ctx, q.shape) : null;
  ctx.run(
    kvAppendKernel,
    {
      rows: rowBuf,
      // (without q its slots are never touched: q reads k, qr writes a spare)
      q: q ?? k,
      k,
      v,
      tab,
      qr: qr ?? spare(ctx),
      kc: cache.k,
      vc: cache.v,
    },
    { B, Hq, Hkv, half, S, cap, pos: position, hasRows },
    grid(B * (Hq + Hkv) * half, KV_APPEND_GROUP),
  );
  if (!q || !qr) return null;
  const n = position + 1;
  const scores = emptyLike(ctx, [B, Hq, n]);
  const out = emptyLike(ctx, [B, Hq, hd]);
  ctx.run(
    attentionDecodeKernel,
    { rows: rowBuf, q: qr, kc: cache.k, vc: cache.v, scores, out },
    { B, Hq, Hkv, hd, S, cap, n, scale: 1 / Math.sqrt(hd), hasRows },
    grid(B * Hq, 1),
  );
  scores.dispose();
  qr.dispose();
  return out;
}
