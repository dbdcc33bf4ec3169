/*
 * The CPU backends' capabilities (@loop/tensor's BackendCapabilities): host memory, fp32, the
 * recurrent decoding of `generate` with every step policy, custom mixers, and the GEMM of the
 * kernels they run on.
 */
import { type BackendCapabilities, decodeCapability, fusedComposites } from "@loop/tensor";
import type { CpuKernels } from "@loop/tensor/kernel";
import { cpuBackendOps } from "./cpu-backend-ops.js";

/** What a CPU backend on `kernels` has. */
export function cpuCapabilities(kernels: CpuKernels): BackendCapabilities {
  return {
    memory: "host",
    precisions: ["fp32"],
    decode: decodeCapability(cpuBackendOps),
    train: { customMixers: true },
    fused: fusedComposites(cpuBackendOps),
    features: [],
    gemm: kernels.gemm.name,
  };
}
