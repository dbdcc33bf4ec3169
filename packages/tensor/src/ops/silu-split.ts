/*
 * silu followed by a split of the last axis, fused (docs/model.md §3.2–3.3: xBC = silu(conv(·)) is
 * split into x, B, C):
 *   y_k[..., j] = silu(x[..., o_k + j]),  o_k = Σ_{i<k} w_i
 * Backward: ∂x[..., o_k + j] = g_k[..., j] · σ(1 + x(1 − σ)), σ = σ(x[..., o_k + j]) (zeros for a
 * piece without gradient). Equal to split(silu(x), widths) without the intermediate tensor and
 * the split copies; σ is recomputed in the backward instead of stored.
 * Shapes: x [..., W], widths summing to W → y_k [..., w_k].
 */
import { record } from "../autograd/node.js";
import { kernelSet } from "../native-registry.js";
import { allocF32Uninit, type Tensor } from "../tensor.js";
import { checkWidths } from "./shape.js";
import { sigmoidScalar } from "./unary.js";

/** Native twins (native/tensor.c). */
export type SiluRowsFwd = (
  x: Float32Array,
  off: number,
  ldx: number,
  y: Float32Array,
  rows: number,
  w: number,
) => void;
export type SiluRowsBwd = (
  x: Float32Array,
  off: number,
  ldx: number,
  g: Float32Array | null,
  gx: Float32Array,
  rows: number,
  w: number,
) => void;

/** Portable forward of one piece (the reference for the native twin). */
export const siluRowsFwd: SiluRowsFwd = (x, off, ldx, y, rows, w) => {
  for (let r = 0; r < rows; r++) {
    const xo = r * ldx + off;
    for (let j = 0; j < w; j++) {
      const v = x[xo + j]!;
      y[r * w + j] = v * sigmoidScalar(v);
    }
  }
};

/** Portable backward of one piece. */
export const siluRowsBwd: SiluRowsBwd = (x, off, ldx, g, gx, rows, w) => {
  for (let r = 0; r < rows; r++) {
    const xo = r * ldx + off;
    if (!g) {
      gx.fill(0, xo, xo + w);
      continue;
    }
    for (let j = 0; j < w; j++) {
      const v = x[xo + j]!;
      const s = sigmoidScalar(v);
      gx[xo + j] = g[r * w + j]! * s * (1 + v * (1 - s));
    }
  }
};

/** silu(x) split along the last axis into pieces of `widths`; differentiable. */
export function siluSplit(x: Tensor, widths: readonly number[]): Tensor[] {
  const W = checkWidths("siluSplit", x, widths);
  const rows = x.rows;
  const lead = x.shape.slice(0, -1);
  const fwd = kernelSet("tensor")?.siluRowsFwd ?? siluRowsFwd;
  let off = 0;
  const outs = widths.map((w) => {
    const y = allocF32Uninit(rows * w);
    fwd(x.data, off, W, y, rows, w);
    off += w;
    return { data: y, shape: [...lead, w] };
  });
  return record("siluSplit", [x], outs, (gys) => {
    const bwd = kernelSet("tensor")?.siluRowsBwd ?? siluRowsBwd;
    const gx = allocF32Uninit(x.size); // every piece writes its columns (zeros without gradient)
    let o = 0;
    gys.forEach((g, k) => {
      const w = widths[k]!;
      bwd(x.data, o, W, g, gx, rows, w);
      o += w;
    });
    return [gx];
  });
}
