/** B, T, Hq, Hkv, hd, blockQ, blockK: one tiled-attention test shape. */
export type TileCase = [number, number, number, number, number, number, number];

/**
 * The small tiled-attention shapes every kernel (portable and native) is checked on: T = 1 (the
 * exact dq is zero), tiles that do not divide T, grouped heads (Hq a multiple of Hkv, down to one
 * KV head), and odd head widths. A suite adds the shapes its own kernel needs.
 */
export const TILE_CASES: TileCase[] = [
  [1, 1, 1, 1, 4, 64, 64],
  [2, 17, 4, 2, 8, 5, 7],
  [1, 33, 6, 3, 6, 8, 8],
  [2, 40, 4, 1, 16, 16, 9],
  [1, 29, 8, 2, 4, 3, 11],
];
