/*
 * Everything the CUDA backend provides (`BackendOps`, @loop/tensor) on one context, over a device
 * (`@loop/cuda/node`'s `startCudaDevice`, or `recordingDevice` to plan and count without a GPU):
 * the backend's own kernels (the model's, the decode and the optimiser's) joined with autograd,
 * which is @loop/tensor's `deviceAutograd` over the context's tape, not the backend's code.
 */
import type { BackendOps, DecodeOps, KernelOps } from "@loop/tensor";
import { cudaAutograd } from "./autograd.js";
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

/** What the CUDA backend implements itself on `ctx`: its kernels, transfers and decode kernels. */
export function cudaKernelOps(
  ctx: CudaContext,
  grads: Parameters<typeof cudaTrainOps>[1],
): KernelOps<CudaTensor, CudaTensor> & DecodeOps<CudaTensor, CudaTensor> {
  return { ...cudaModelOps(ctx), ...cudaTrainOps(ctx, grads) };
}

/** `BackendOps` on `device` at `o.precision` (default fp32). */
export function cudaBackend(device: CudaDevice, o: CudaContextOptions = {}): CudaBackend {
  const ctx = new CudaContext(device, o);
  // gradOf and takeGrad are the optimiser kernels' access to the gradients, not ops
  const { gradOf, takeGrad, ...autograd } = cudaAutograd(ctx);
  return {
    ctx,
    ops: { ...cudaKernelOps(ctx, { gradOf, takeGrad }), ...autograd },
    release: () => ctx.release(),
  };
}
