/**
 * Running one layer's decode step on a subset of the batch rows (early-exit decoding, where rows
 * that have exited skip the step). The step kernels work on whole [B, …] states, so the active
 * rows' states are gathered into a smaller batch, stepped, and the changes scattered back:
 *   Mamba-2: conv [B, C, K−1] and ssm [B, H, P, Ns] rows (a contiguous run of rows is used in
 *     place as a view, no copy); KV cache: the active rows' cache (KvCache.gatherRows) is
 *     stepped and its new position copied back (KvCache.copyPositionFrom).
 * The caller advances the full KV cache's length (the subset step only fills active rows).
 */
import type { KvCache } from "@loop/attention";
import type { Mamba2State } from "@loop/ssm-kernels";
import type { Tensor } from "@loop/tensor";
import type { Layer, LayerState } from "./layer.js";

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
 * Run `fn` on the Mamba-2 state of the batch rows `rows` (ascending) alone, as a state of batch
 * rows.length, and keep what it changes.
 */
export function withMambaRows<R>(
  st: Mamba2State,
  rows: readonly number[],
  fn: (sub: LayerState) => R,
): R {
  const convStride = st.conv.length / st.batch;
  const ssmStride = st.ssm.length / st.batch;
  const sub: Mamba2State = {
    conv: gatherRows(st.conv, convStride, rows),
    ssm: gatherRows(st.ssm, ssmStride, rows),
    batch: rows.length,
  };
  const out = fn({ kind: "mamba", state: sub });
  scatterRows(st.conv, convStride, rows, sub.conv);
  scatterRows(st.ssm, ssmStride, rows, sub.ssm);
  return out;
}

function stepMambaRows(layer: Layer, st: Mamba2State, h: Tensor, rows: readonly number[]): Tensor {
  return withMambaRows(st, rows, (sub) => layer.step(sub, h));
}

function stepAttentionRows(
  layer: Layer,
  cache: KvCache,
  h: Tensor,
  rows: readonly number[],
): Tensor {
  const sub = cache.gatherRows(rows);
  const out = layer.step({ kind: "attention", cache: sub }, h);
  cache.copyPositionFrom(sub, rows, cache.length);
  return out;
}

/**
 * One layer's step for the batch rows `rows` (ascending), h [rows.length, D] → [rows.length, D].
 * With every row active this is exactly `layer.step`. A KV cache's length is not advanced for a
 * strict subset.
 */
export function stepLayerRows(
  layer: Layer,
  st: LayerState,
  h: Tensor,
  rows: readonly number[],
  batch: number,
): Tensor {
  if (rows.length === batch) return layer.step(st, h);
  return st.kind === "mamba"
    ? stepMambaRows(layer, st.state, h, rows)
    : stepAttentionRows(layer, st.cache, h, rows);
}
