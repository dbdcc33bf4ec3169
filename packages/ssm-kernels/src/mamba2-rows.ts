/*
 * A Mamba-2 decode state restricted to some of its batch rows (early-exit decoding, where rows
 * that have exited skip a step). The step kernels work on whole [B, …] states, so the rows'
 * conv [B, C, K−1] and ssm [B, H, P, N] slices are gathered into a smaller state, stepped, and
 * the changes scattered back; a contiguous run of rows is used in place as a view, no copy.
 */
import type { Mamba2State } from "./mamba2-mixer.js";

function isContiguous(rows: readonly number[]): boolean {
  for (let j = 1; j < rows.length; j++) if (rows[j] !== rows[0]! + j) return false;
  return true;
}

function gatherRows(src: Float32Array, stride: number, rows: readonly number[]): Float32Array {
  if (isContiguous(rows)) return src.subarray(rows[0]! * stride, (rows[0]! + rows.length) * stride);
  const out = new Float32Array(rows.length * stride);
  rows.forEach((b, j) => {
    out.set(src.subarray(b * stride, (b + 1) * stride), j * stride);
  });
  return out;
}

function scatterRows(
  dst: Float32Array,
  stride: number,
  rows: readonly number[],
  src: Float32Array,
) {
  if (src.buffer === dst.buffer) return; // a view: already updated in place
  rows.forEach((b, j) => {
    dst.set(src.subarray(j * stride, (j + 1) * stride), b * stride);
  });
}

/**
 * Run `fn` on the state of the batch rows `rows` (ascending) alone, as a state of batch
 * rows.length, and keep what it changes.
 */
export function withStateRows<R>(
  st: Mamba2State,
  rows: readonly number[],
  fn: (sub: Mamba2State) => R,
): R {
  const convStride = st.conv.length / st.batch;
  const ssmStride = st.ssm.length / st.batch;
  const sub: Mamba2State = {
    conv: gatherRows(st.conv, convStride, rows),
    ssm: gatherRows(st.ssm, ssmStride, rows),
    batch: rows.length,
  };
  const out = fn(sub);
  scatterRows(st.conv, convStride, rows, sub.conv);
  scatterRows(st.ssm, ssmStride, rows, sub.ssm);
  return out;
}
