/*
 * Rotary position embedding, rotate-half layout (docs/model.md §4).
 *
 *   x [B, T, H, hd] → y [B, T, H, hd], hd even, position p = offset + t, pair index i < hd/2:
 *     θ_i = base^(−2i/hd),  a = p·θ_i
 *     y[i]        = x[i]·cos a − x[i + hd/2]·sin a
 *     y[i + hd/2] = x[i + hd/2]·cos a + x[i]·sin a
 *
 * The backward applies the inverse rotation (angle −a) to the upstream gradient:
 *     gx[i] = g[i]·cos a + g[i + hd/2]·sin a,  gx[i + hd/2] = g[i + hd/2]·cos a − g[i]·sin a
 * Angles and their cos/sin are computed in float64 (large p·θ_i loses accuracy in float32).
 * A registered native kernel (native/attention.c `rope`) takes over the rotation loop; the loop
 * below stays as fallback and reference.
 */
import { checkHeadDim, type RopeOptions, ropeTables, shapeStr, type Tensor } from "@loop/tensor";
import { allocF32Uninit, kernelSet, record1 } from "@loop/tensor/kernel";

/** native/attention.c rope(src, dst, B, T, H, hd, cos, sin, sign, ld): positions ld floats apart (0: H·hd). */
export type RopeNative = (...args: Required<Parameters<typeof rotate>>) => void;

export { type RopeOptions, ropeTables };

/** The last few tables (every layer and loop step asks for the same ones); never mutated. */
const tableCache: { key: string; tables: { cos: Float64Array; sin: Float64Array } }[] = [];
const TABLE_CACHE_SIZE = 4;

/** ropeTables, remembered for the last few argument sets. */
export function cachedTables(
  headDim: number,
  T: number,
  theta: number,
  offset: number,
): { cos: Float64Array; sin: Float64Array } {
  const key = `${headDim},${T},${theta},${offset}`;
  const hit = tableCache.find((e) => e.key === key);
  if (hit) return hit.tables;
  const tables = ropeTables(headDim, T, theta, offset);
  tableCache.unshift({ key, tables });
  if (tableCache.length > TABLE_CACHE_SIZE) tableCache.pop();
  return tables;
}

/**
 * Rotate pairs of `src` into `dst` (both [B, T, H, hd], positions `ld` floats apart: H·hd when
 * packed); `sign` = +1 rotates by +a (forward), −1 by −a (backward). Each pair is read before it
 * is written, so `dst` may be `src`.
 */
export function rotate(
  src: Float32Array,
  dst: Float32Array,
  B: number,
  T: number,
  H: number,
  hd: number,
  cos: Float64Array,
  sin: Float64Array,
  sign: 1 | -1,
  ld = H * hd,
): void {
  const nat = kernelSet("attention")?.rope;
  if (nat) {
    nat(src, dst, B, T, H, hd, cos, sin, sign, ld);
    return;
  }
  const half = hd / 2;
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      const tab = t * half;
      const row = (b * T + t) * ld;
      for (let h = 0; h < H; h++) {
        const o = row + h * hd;
        for (let i = 0; i < half; i++) {
          const c = cos[tab + i]!;
          const s = sign * sin[tab + i]!;
          const x1 = src[o + i]!;
          const x2 = src[o + i + half]!;
          dst[o + i] = x1 * c - x2 * s;
          dst[o + i + half] = x2 * c + x1 * s;
        }
      }
    }
  }
}

/** Apply RoPE to x [B, T, H, hd] (fused op with backward). */
export function rope(x: Tensor, opts: RopeOptions = {}): Tensor {
  if (x.rank !== 4) {
    throw new Error(`rope: x must be [B, T, H, head_dim], got ${shapeStr(x.shape)}`);
  }
  const [B, T, H, hd] = x.shape as [number, number, number, number];
  checkHeadDim(hd);
  const { cos, sin } = cachedTables(hd, T, opts.theta ?? 10000, opts.offset ?? 0);
  const y = allocF32Uninit(x.size); // rotate writes every element
  rotate(x.data, y, B, T, H, hd, cos, sin, 1);
  return record1("rope", [x], y, x.shape, ([g]) => {
    const gx = allocF32Uninit(x.size);
    rotate(g!, gx, B, T, H, hd, cos, sin, -1);
    return [gx];
  });
}

/**
 * In-place RoPE on raw rows (inference paths such as the KV-cache step): `data` holds
 * [B, T, H, hd] for positions offset..offset+T-1.
 */
export function ropeInPlace(
  data: Float32Array,
  shape: readonly [number, number, number, number],
  theta: number,
  offset: number,
): void {
  const [B, T, H, hd] = shape;
  const { cos, sin } = cachedTables(hd, T, theta, offset);
  rotate(data, data, B, T, H, hd, cos, sin, 1);
}
