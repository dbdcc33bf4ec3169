/*
 * Everything the CUDA backend provides (`BackendOps`, @loop/tensor): the model's ops and the
 * training ops on one context, over a device (`@loop/cuda/node`'s `startCudaDevice`, or
 * `recordingDevice` to plan and count without a GPU).
 */
import type { BackendOps, DecodeOps } from "@loop/tensor";
import { CudaContext, type CudaContextOptions } from "./context.js";
import type { CudaTensor } from "./cuda-tensor.js";
import type { CudaDevice } from "./device.js";
import { cudaModelOps } from "./model-ops.js";
import { cudaTrainOps } from "./train-ops.js";

/** The backend's ops with the context they run on (its counters, its allocator). */
export interface CudaBackend {
  ctx: CudaContext;
  ops: BackendOps<CudaTensor, CudaTensor> & DecodeOps<CudaTensor, CudaTensor>;
  /** Give the context's device memory back (its model is done; see CudaContext.release). */
  release(): void;
}

/** `BackendOps` on `device` at `o.precision` (default fp32). */
export function cudaBackend(device: CudaDevice, o: CudaContextOptions = {}): CudaBackend {
  const ctx = new CudaContext(device, o);
  return {
    ctx,
    ops: { ...cudaModelOps(ctx), ...cudaTrainOps(ctx) },
    release: () => ctx.release(),
  };
}
