/* Helpers for ops with optional inputs and packed-document indices. */
import type { GpuContext } from "../gpu-context.js";
import type { GpuTensor } from "../gpu-tensor.js";
import { getOrMake } from "../memo.js";
import { shapeStr } from "./shape-str.js";

/**
 * A 4-byte buffer, one per context, bound where a kernel declares a read-only input that a call
 * does not use (its flag is off, so the kernel never touches it). An unused writable slot may
 * take it only when no read-only slot of the same dispatch does: WebGPU forbids one buffer in a
 * read-only and a writable binding of one dispatch.
 */
const placeholders = new WeakMap<GpuContext, GPUBuffer>();
export function placeholder(ctx: GpuContext): GPUBuffer {
  return getOrMake(placeholders, ctx, () => ctx.allocBytes(4));
}

/** Check seqIdx: an i32 tensor of B·T document indices (non-decreasing along a row). */
export function checkSeqIdx(op: string, seqIdx: GpuTensor, batch: number, T: number): void {
  if (seqIdx.dtype !== "i32" || seqIdx.size !== batch * T)
    throw new Error(
      `webgpu ${op}: seqIdx must be an i32 tensor of [${batch},${T}] = ${batch * T} values, got ${seqIdx.dtype} ${shapeStr(seqIdx.shape)}`,
    );
}
