/*
 * Thread-pool kernels of the elementwise ops that dominate a Mamba-2 step outside the matrix
 * products and scans (ops/unary.ts silu, ops/shape.ts split/concat row copies). Each processes
 * an index range [lo, hi): elements for silu, rows for the copies. parallelFor runs them on the
 * calling thread when no pool is running or the buffers are not shared.
 *   silu forward:  s = σ(x), y = x·s (s kept for the backward)
 *   silu backward: ∂x = g·s·(1 + x·(1 − s))
 *   copy rows:     dst[r·ds + dOff + j] = src[r·ss + so + j], j < w
 */
import { kernelSet } from "../native-registry.js";
import { parallelFor } from "../threads/pool.js";
import { defineKernel } from "../threads/registry.js";
import { fastExp } from "./fast-exp.js";

/** Elements (or copied floats) below which a part is not worth a thread hand-off. */
const MIN_PER_THREAD = 1 << 15;

interface SiluFwdArgs extends Record<string, unknown> {
  x: Float32Array;
  y: Float32Array;
  sig: Float32Array;
  keep: boolean;
}

const siluFwd = defineKernel<SiluFwdArgs>("tensor/silu-fwd", import.meta.url, (a, lo, hi) => {
  const { x, y, sig, keep } = a;
  for (let i = lo; i < hi; i++) {
    const v = x[i]!;
    const e = fastExp(-Math.abs(v));
    const s = (v >= 0 ? 1 : e) / (1 + e);
    if (keep) sig[i] = s;
    y[i] = v * s;
  }
});

interface SiluBwdArgs extends Record<string, unknown> {
  x: Float32Array;
  sig: Float32Array;
  g: Float32Array;
  gx: Float32Array;
}

const siluBwd = defineKernel<SiluBwdArgs>("tensor/silu-bwd", import.meta.url, (a, lo, hi) => {
  const { x, sig, g, gx } = a;
  for (let i = lo; i < hi; i++) {
    const v = x[i]!;
    const s = sig[i]!;
    gx[i] = g[i]! * s * (1 + v * (1 - s));
  }
});

export type NativeSiluFwd = (
  x: Float32Array,
  y: Float32Array,
  sig: Float32Array | null,
  n: number,
) => void;
export type NativeSiluBwd = (
  x: Float32Array,
  sig: Float32Array,
  g: Float32Array,
  gx: Float32Array,
  n: number,
) => void;

/** y = silu(x); with `sig`, σ(x) is stored there too. */
export function siluForward(x: Float32Array, y: Float32Array, sig: Float32Array | null): void {
  const nat = kernelSet("tensor")?.siluFwd;
  if (nat) {
    nat(x, y, sig, x.length);
    return;
  }
  const keep = sig !== null;
  parallelFor(siluFwd, x.length, { x, y, sig: sig ?? y, keep }, { minPerThread: MIN_PER_THREAD });
}

export function siluBackward(
  x: Float32Array,
  sig: Float32Array,
  g: Float32Array,
  gx: Float32Array,
): void {
  const nat = kernelSet("tensor")?.siluBwd;
  if (nat) {
    nat(x, sig, g, gx, x.length);
    return;
  }
  parallelFor(siluBwd, x.length, { x, sig, g, gx }, { minPerThread: MIN_PER_THREAD });
}

interface CopyArgs extends Record<string, unknown> {
  src: Float32Array;
  so: number;
  ss: number;
  dst: Float32Array;
  dOff: number;
  ds: number;
  w: number;
}

const copyKernel = defineKernel<CopyArgs>("tensor/copy-rows", import.meta.url, (a, lo, hi) => {
  const { src, so, ss, dst, dOff, ds, w } = a;
  if (w >= 64) {
    // wide rows: memcpy per row (a subarray per row costs less than copying w floats by hand)
    for (let r = lo; r < hi; r++)
      dst.set(src.subarray(r * ss + so, r * ss + so + w), r * ds + dOff);
    return;
  }
  for (let r = lo; r < hi; r++) {
    const s0 = r * ss + so;
    const d0 = r * ds + dOff;
    for (let j = 0; j < w; j++) dst[d0 + j] = src[s0 + j]!;
  }
});

/** native/tensor.c copyRows: the arguments of `copyRows`. */
export type NativeCopyRows = typeof copyRows;

/** Copy `rows` rows of `w` floats: src[r·ss + so + j] → dst[r·ds + dOff + j]. */
export function copyRows(
  src: Float32Array,
  so: number,
  ss: number,
  dst: Float32Array,
  dOff: number,
  ds: number,
  rows: number,
  w: number,
): void {
  if (rows === 0 || w === 0) return;
  const nat = kernelSet("tensor")?.copyRows;
  if (nat) {
    nat(src, so, ss, dst, dOff, ds, rows, w);
    return;
  }
  parallelFor(
    copyKernel,
    rows,
    { src, so, ss, dst, dOff, ds, w },
    { minPerThread: Math.ceil(MIN_PER_THREAD / w) },
  );
}
