/** Helpers for ops with optional inputs and packed-document indices. */
import type { GpuContext } from "../gpu-context.js";
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { fillTensor } from "./elementwise.js";
import { shapeStr } from "./shape-str.js";

/** A 1-element placeholder bound where an optional input is absent (its flag is off). */
export function placeholder(ctx: GpuContext, dtype: "f32" | "i32" = "f32"): GpuTensor {
  return dtype === "f32" ? fillTensor(ctx, [1], 0) : emptyLike(ctx, [1], "i32");
}

/** Check seqIdx: an i32 tensor of B·T document indices (non-decreasing along a row). */
export function checkSeqIdx(op: string, seqIdx: GpuTensor, batch: number, T: number): void {
  if (seqIdx.dtype !== "i32" || seqIdx.size !== batch * T)
    throw new Error(
      `webgpu ${op}: seqIdx must be an i32 tensor of [${batch},${T}] = ${batch * T} values, got ${seqIdx.dtype} ${shapeStr(seqIdx.shape)}`,
    );
}
