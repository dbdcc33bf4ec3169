/*
 * The precision of the backend's GEMMs (`--precision`): `fp32` (exact fp32 products), `tf32`
 * (fp32 operands rounded to tf32 on the tensor cores) or `bf16` (bf16 operands, fp32
 * accumulation). Everything else stays fp32 whatever the precision: the master weights, the
 * optimiser's moments, gradients, norms, the scan's state and the losses. Under bf16 a weight's
 * bf16 copy is made once per version (after each update) and serves every GEMM that reads it
 * until the next update, forward and backward; an activation's copy is made once and serves its
 * forward product and the weight gradient that reads it again.
 */
import type { Precision } from "@loop/tensor";
import type { LtGemm } from "./device.js";
import type { KernelName } from "./kernel-table.js";

/** The precisions this backend offers (of @loop/tensor's PRECISIONS). */
export const CUDA_PRECISIONS = ["fp32", "tf32", "bf16"] as const satisfies readonly Precision[];
/** A precision of the backend's GEMMs (see the file comment). */
export type CudaPrecision = (typeof CUDA_PRECISIONS)[number];

/** How a GEMM runs at a precision: the own kernel, or cuBLASLt's types, and the operand type. */
export interface GemmPath {
  kernel: KernelName;
  operand: "f32" | "bf16";
  lt: Pick<LtGemm, "abType" | "compute">;
}

/** The GEMM path of `precision` (the kernel when cuBLASLt is absent, its types when present). */
export function gemmPath(precision: CudaPrecision): GemmPath {
  switch (precision) {
    case "fp32":
      return { kernel: "gemm_f32", operand: "f32", lt: { abType: 0, compute: 68 } };
    case "tf32":
      return { kernel: "gemm_tf32", operand: "f32", lt: { abType: 0, compute: 77 } };
    case "bf16":
      return { kernel: "gemm_bf16", operand: "bf16", lt: { abType: 14, compute: 68 } };
  }
}

/** Whether `p` is one of this backend's precisions. */
export function isCudaPrecision(p: string): p is CudaPrecision {
  return (CUDA_PRECISIONS as readonly string[]).includes(p);
}

/** `v` as one of this backend's precisions, or a one-line error listing them. */
export function parseCudaPrecision(v: string): CudaPrecision {
  if (isCudaPrecision(v)) return v;
  throw new Error(
    `precision must be one of ${CUDA_PRECISIONS.join(", ")}, got ${JSON.stringify(v)}`,
  );
}
