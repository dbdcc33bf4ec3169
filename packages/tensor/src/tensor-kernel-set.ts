/* The native kernels of @loop/tensor (native/tensor.c), as the portable ops call them. */
import type { GemmFn } from "./kernels/gemm-fn.js";
import type { NativeBinarySame } from "./ops/binary.js";
import type { NativeCeBwd, NativeCeFwd } from "./ops/cross-entropy-kernels.js";
import type { NativeCopyRows, NativeSiluBwd, NativeSiluFwd } from "./ops/elementwise-kernels.js";
import type { EmbeddingBwd } from "./ops/embedding.js";
import type { RmsnormBwd, RmsnormFwd } from "./ops/rmsnorm.js";
import type { SiluRowsBwd, SiluRowsFwd } from "./ops/silu-split.js";
import type { NativeAdamw } from "./optim/adamw-update.js";

/**
 * The tensor kernels a native addon provides (the GEMM, silu, binary ops, RMSNorm, row copies, …),
 * registered as the kernel set `tensor`.
 */
export interface TensorKernelSet {
  /** The GEMM (installed with setGemm; listed here so reports name it). */
  sgemm: GemmFn;
  siluFwd: NativeSiluFwd;
  siluBwd: NativeSiluBwd;
  binarySame: NativeBinarySame;
  siluRowsFwd: SiluRowsFwd;
  siluRowsBwd: SiluRowsBwd;
  copyRows: NativeCopyRows;
  rmsnormFwd: RmsnormFwd;
  rmsnormBwd: RmsnormBwd;
  adamw: NativeAdamw;
  ceFwd: NativeCeFwd;
  ceBwd: NativeCeBwd;
  embeddingBwd: EmbeddingBwd;
}
