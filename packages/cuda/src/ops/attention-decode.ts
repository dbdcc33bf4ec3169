/*
 * Attention's decode step over a KV cache on the CUDA backend (kernels/decode.cu; the CPU's
 * @loop/attention `KvCache` + `appendAndAttend` for one token). The cache lives on the device,
 * k and v [S, Hkv, capacity, hd] with keys stored rotated; a token at position `pos` is
 *   q, k = RoPE(u·wqᵀ, u·wkᵀ) at pos (`ropeAt`),  v = u·wvᵀ;
 *   kv_append writes k, v at pos;  out = causal GQA attention of q over positions 0..pos.
 * Inference only: not recorded. Shapes: q [B, Hq, hd], k, v [B, Hkv, hd] → out [B, Hq, hd].
 */
import type { CudaContext } from "../context.js";
import type { CudaTensor } from "../cuda-tensor.js";
import { ropeOn } from "./attention-ops.js";
import { expect, expectShape } from "./shapes.js";

/** One attention layer's KV cache on the device: rotated keys and values [S, Hkv, capacity, hd]. */
export interface CudaKvCache {
  k: CudaTensor;
  v: CudaTensor;
}

/** An empty cache of `rows` sequences and `capacity` positions (zeros: nothing is read unwritten). */
export function kvCacheOn(
  ctx: CudaContext,
  rows: number,
  nKvHeads: number,
  capacity: number,
  headDim: number,
): CudaKvCache {
  const shape = [rows, nKvHeads, capacity, headDim];
  return { k: ctx.zeros(shape, true), v: ctx.zeros(shape, true) };
}

/**
 * RoPE (rotate-half, base `theta`) of x [B, H, hd] at position `pos` of a cache of `capacity`
 * positions: one table of `capacity` rows per (hd, theta), read at row pos, so decoding a long
 * sequence makes no table per position.
 */
export function ropeAt(
  ctx: CudaContext,
  x: CudaTensor,
  theta: number,
  pos: number,
  capacity: number,
): CudaTensor {
  expect(x.shape.length === 3, `cuda ropeAt: x has shape [${x.shape}], expected [B,H,hd]`);
  expect(
    Number.isInteger(pos) && pos >= 0 && pos < capacity,
    `cuda ropeAt: position ${pos} is outside the cache's capacity ${capacity}`,
  );
  const [B, H, hd] = x.shape as [number, number, number];
  const half = hd / 2;
  const { cos, sin } = ropeOn(ctx, hd, capacity, theta, 0);
  const y = ctx.empty(x.shape);
  ctx.run("rope", ctx.elems(B * H * half), [
    B,
    H,
    hd,
    1,
    x,
    ctx.view(cos, [1, half], pos * half),
    ctx.view(sin, [1, half], pos * half),
    1,
    y,
  ]);
  return y;
}

/**
 * Write k, v (rotated, [B, Hkv, hd]) at position `pos` of the cache rows `rows` (an i32 tensor
 * [B] of distinct rows; null: rows 0..B−1) and attend q [B, Hq, hd] (rotated) over positions
 * 0..pos of those rows: out [B, Hq, hd].
 */
export function appendAndAttendOn(
  ctx: CudaContext,
  cache: CudaKvCache,
  q: CudaTensor,
  k: CudaTensor,
  v: CudaTensor,
  pos: number,
  rows: CudaTensor | null = null,
): CudaTensor {
  return appendOn(ctx, cache, q, k, v, pos, rows)!;
}

/** `appendAndAttendOn`; with q null, the write alone (an exited token's entry) and null. */
export function appendOn(
  ctx: CudaContext,
  cache: CudaKvCache,
  q: CudaTensor | null,
  k: CudaTensor,
  v: CudaTensor,
  pos: number,
  rows: CudaTensor | null = null,
): CudaTensor | null {
  const op = "cuda appendAndAttend";
  const [S, Hkv, cap, hd] = cache.k.shape as [number, number, number, number];
  const B = k.shape[0]!;
  expect(
    !q || (q.shape.length === 3 && q.shape[0] === B && q.shape[2] === hd),
    `${op}: q has shape [${q?.shape}], expected [${B},Hq,${hd}]`,
  );
  const Hq = q?.shape[1] ?? Hkv;
  expectShape(op, "k", k, [B, Hkv, hd]);
  expectShape(op, "v", v, [B, Hkv, hd]);
  expectShape(op, "cache.v", cache.v, cache.k.shape);
  expect(Hq % Hkv === 0, `${op}: ${Hkv} KV heads do not divide ${Hq} query heads`);
  expect(
    Number.isInteger(pos) && pos >= 0 && pos < cap,
    `${op}: position ${pos} is outside the cache's capacity ${cap}`,
  );
  if (rows) {
    expectShape(op, "rows", rows, [B]);
    const ids = rows.hostInt;
    expect(
      rows.dtype === "i32" &&
        (!ids || (new Set(ids).size === B && ids.every((s) => s >= 0 && s < S))),
      `${op}: rows must be ${B} distinct state rows of 0..${S - 1}`,
    );
  } else expect(B === S, `${op}: the state holds ${S} rows, the input ${B} (pass rows to pick)`);
  const kvArgs = [B, Hkv, hd, cap, pos, rows, k, v, cache.k, cache.v] as const;
  ctx.run("kv_append", ctx.elems(B * Hkv * hd), kvArgs);
  if (!q) return null;
  const n = pos + 1;
  const scores = ctx.empty([B, Hq, n]);
  const out = ctx.empty([B, Hq, hd]);
  const c = 1 / Math.sqrt(hd);
  const args = [B, Hq, Hkv, hd, cap, n, c, rows, q, cache.k, cache.v, scores, out] as const;
  ctx.run("attn_decode", ctx.rows(B * Hq, 128), args);
  ctx.dispose(scores);
  return out;
}
