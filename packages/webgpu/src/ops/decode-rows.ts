/* The `rows` of a decode call (@loop/tensor DecodeRows): which state rows the input rows go to. */
import type { GpuTensor } from "../gpu-tensor.js";
import { knownInts } from "../host-ints.js";
import { shapeStr } from "./shape-str.js";

/**
 * Check `rows` for `batch` input rows into a state of `stateRows` rows: an i32 tensor [batch] of
 * distinct rows of 0..stateRows−1 (checked where its values are known on the host), or, absent,
 * a state of exactly `batch` rows. Throws one line naming `op`.
 */
export function checkDecodeRows(
  op: string,
  rows: GpuTensor | null,
  batch: number,
  stateRows: number,
): void {
  if (!rows) {
    if (stateRows !== batch)
      throw new Error(
        `${op}: the state holds ${stateRows} rows, the input ${batch} (pass rows to pick)`,
      );
    return;
  }
  const want = `${op}: rows must be ${batch} distinct state rows of 0..${stateRows - 1}`;
  if (rows.dtype !== "i32" || rows.rank !== 1 || rows.size !== batch)
    throw new Error(`${want}, got a ${rows.dtype} tensor of ${shapeStr(rows.shape)}`);
  const ids = knownInts(rows);
  if (!ids) return;
  const bad = ids.find((s) => !(s >= 0 && s < stateRows));
  if (bad !== undefined) throw new Error(`${want}, got row ${bad}`);
  if (new Set(ids).size !== ids.length)
    throw new Error(`${want}, got [${Array.from(ids).join(",")}] (a row repeats)`);
}
