/*
 * Thread-pool kernels of crossEntropyPerToken (ops/loss.ts), over rows [lo, hi) of logits [rows, V]:
 *   forward:  lse_r = m_r + ln Σ_j e^{x_rj − m_r} (m_r the row max), ℓ_r = lse_r − x_{r,t_r},
 *             nothing at rows whose target is the ignore index
 *   backward: ∂x_rj = g_r · (e^{x_rj − lse_r} − [j = t_r])
 * Every exponent is ≤ 0, so the fast e^x≤0 of fast-exp.ts applies. parallelFor runs them on the
 * calling thread without a pool or when a buffer is not shared. Registered native twins
 * (native/tensor.c `ceFwd`, `ceBwd`) take over when present.
 */
import { kernelSet } from "../native-registry.js";
import { parallelFor } from "../threads/pool.js";
import { defineKernel } from "../threads/registry.js";
import { fastExp, rowLogSumExp } from "./fast-exp.js";

export interface CeFwdArgs extends Record<string, unknown> {
  x: Float32Array;
  t: Int32Array;
  lse: Float64Array;
  y: Float32Array;
  V: number;
  ignore: number;
}

const ceFwd = defineKernel<CeFwdArgs>("tensor/ce-fwd", import.meta.url, (a, lo, hi) => {
  const { x, t, lse, y, V, ignore } = a;
  for (let r = lo; r < hi; r++) {
    const tr = t[r]!;
    if (tr === ignore) continue;
    const o = r * V;
    const l = rowLogSumExp(x, o, V);
    lse[r] = l;
    y[r] = l - x[o + tr]!;
  }
});

export interface CeBwdArgs extends Record<string, unknown> {
  x: Float32Array;
  t: Int32Array;
  lse: Float64Array;
  g: Float32Array;
  gx: Float32Array;
  V: number;
  ignore: number;
}

const ceBwd = defineKernel<CeBwdArgs>("tensor/ce-bwd", import.meta.url, (a, lo, hi) => {
  const { x, t, lse, g, gx, V, ignore } = a;
  for (let r = lo; r < hi; r++) {
    const tr = t[r]!;
    const gr = g[r]!;
    if (tr === ignore || gr === 0) continue;
    const o = r * V;
    const l = lse[r]!;
    for (let j = 0; j < V; j++) gx[o + j] = gr * fastExp(x[o + j]! - l);
    gx[o + tr]! -= gr;
  }
});

/** Rows per thread below which the hand-off is not worth it (in logits entries). */
const minRows = (V: number) => Math.max(1, Math.ceil(32768 / V));

/** Native twins (native/tensor.c). */
export type NativeCeFwd = (
  x: Float32Array,
  t: Int32Array,
  lse: Float64Array,
  y: Float32Array,
  rows: number,
  V: number,
  ignore: number,
) => void;
export type NativeCeBwd = (
  x: Float32Array,
  t: Int32Array,
  lse: Float64Array,
  g: Float32Array,
  gx: Float32Array,
  rows: number,
  V: number,
  ignore: number,
) => void;

/** Forward over every row of `a.t` (a.lse and a.y written at rows whose target is kept). */
export function ceForward(a: CeFwdArgs): void {
  const nat = kernelSet("tensor")?.ceFwd;
  if (nat) {
    nat(a.x, a.t, a.lse, a.y, a.t.length, a.V, a.ignore);
    return;
  }
  parallelFor(ceFwd, a.t.length, a, { minPerThread: minRows(a.V) });
}

/** Backward over every row of `a.t` (a.gx rows of kept, non-zero-gradient targets written). */
export function ceBackward(a: CeBwdArgs): void {
  const nat = kernelSet("tensor")?.ceBwd;
  if (nat) {
    nat(a.x, a.t, a.lse, a.g, a.gx, a.t.length, a.V, a.ignore);
    return;
  }
  parallelFor(ceBwd, a.t.length, a, { minPerThread: minRows(a.V) });
}
