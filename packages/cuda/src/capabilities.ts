/*
 * The CUDA backend's capabilities (@loop/tensor's BackendCapabilities), read from its device:
 * device memory, fp32 and the tensor-core precisions tf32 and bf16, the decoding its decode
 * kernels give, the built-in mixers, the composites its ops fuse, and cuBLASLt where the device
 * found it (else the backend's own GEMM kernels).
 */
import { type BackendCapabilities, decodeCapability, fusedComposites } from "@loop/tensor";
import type { CudaDevice } from "./device.js";
import { CUDA_PRECISIONS } from "./precision.js";

/** What the CUDA backend on `device` with `ops` (cudaBackend(device).ops) has. */
export function cudaCapabilities(device: CudaDevice, ops: object): BackendCapabilities {
  const lt = device.ltGemm !== undefined;
  return {
    memory: "device",
    precisions: CUDA_PRECISIONS,
    decode: decodeCapability(ops),
    train: { customMixers: false },
    fused: fusedComposites(ops),
    features: lt ? ["tensor-cores", "cublaslt"] : ["tensor-cores"],
    gemm: lt ? "cuBLASLt" : "own kernels",
  };
}
