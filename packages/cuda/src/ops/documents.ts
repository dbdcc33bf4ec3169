/*
 * Packed documents on the device, derived on the host from an index tensor's host copy (no
 * read-back): `starts` [B·T] (i32: the first position of each position's document, what the conv
 * and attention kernels read) and `resets` [B·T] (f32: 1 where a document starts, what the scan
 * reads). Cached per seqIdx tensor for the step.
 */
import type { CudaContext } from "../context.js";
import type { CudaTensor } from "../cuda-tensor.js";
import { expect } from "./shapes.js";

const cache = new WeakMap<CudaTensor, { starts: CudaTensor; resets: CudaTensor }>();

/** The device `starts` and `resets` of `seqIdx` [B·T] (or [B, T]). */
export function documents(
  ctx: CudaContext,
  seqIdx: CudaTensor,
  B: number,
  T: number,
): { starts: CudaTensor; resets: CudaTensor } {
  const hit = cache.get(seqIdx);
  if (hit && !hit.starts.released && !hit.resets.released) return hit;
  const ids = seqIdx.hostInt;
  expect(ids !== null, "seqIdx: an index tensor uploaded with uploadInt is needed");
  expect(ids.length === B * T, `seqIdx must hold [${B},${T}] = ${B * T} values, got ${ids.length}`);
  const starts = new Int32Array(B * T);
  const resets = new Float32Array(B * T);
  for (let b = 0; b < B; b++) {
    let start = 0;
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      if (t > 0 && ids[i] !== ids[i - 1]) {
        expect(
          ids[i]! > ids[i - 1]!,
          `seqIdx must not decrease along a row, got ${ids[i - 1]} then ${ids[i]} at [${b},${t}]`,
        );
        start = t;
        resets[i] = 1;
      }
      starts[i] = start;
    }
  }
  const s = ctx.empty([B * T], "i32");
  ctx.device.upload(s.ptr, starts);
  const r = ctx.empty([B * T]);
  ctx.device.upload(r.ptr, resets);
  const out = { starts: s, resets: r };
  cache.set(seqIdx, out);
  return out;
}
