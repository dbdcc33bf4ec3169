/*
 * The CUDA backend's face of the device tape (@loop/tensor/kernel's `DeviceTape`, one per
 * context): ops record a node whose backward enqueues the kernels of its input gradients and
 * ask where to write a gradient in place (`leafTarget`, `gradTarget`: `acc` as the kernels'
 * 0/1 flag). The walk itself is autograd's (autograd.ts: @loop/tensor's `deviceAutograd`).
 */
import type { DeviceNode } from "@loop/tensor/kernel";
import type { CudaContext } from "./context.js";
import type { CudaTensor } from "./cuda-tensor.js";

/** A recorded op. */
export type TapeNode = DeviceNode<CudaTensor>;

/**
 * Record `outputs` as made from `inputs` by an op whose gradient `backward` computes; does
 * nothing when recording is off or no input requires a gradient. Returns whether it recorded.
 */
export function record(
  ctx: CudaContext,
  name: string,
  inputs: readonly CudaTensor[],
  outputs: readonly CudaTensor[],
  backward: TapeNode["backward"],
): boolean {
  return ctx.tape.record(name, inputs, outputs, backward) !== null;
}

/** A gradient destination with the kernels' accumulate flag (GEMM beta). */
export interface CudaGradTarget {
  out: CudaTensor;
  acc: 0 | 1;
}

const flag = (t: { out: CudaTensor; acc: boolean } | null): CudaGradTarget | null =>
  t && { out: t.out, acc: t.acc ? 1 : 0 };

/**
 * Where an op's backward may write the gradient of `x` itself: a trainable leaf's gradient
 * block, added to (`acc` 1) when it already holds this step's gradient, overwritten (`acc` 0)
 * when not. The op then returns null for `x`. Null when `x` is not a trainable leaf.
 */
export function leafTarget(ctx: CudaContext, x: CudaTensor): CudaGradTarget | null {
  return flag(ctx.tape.leafTarget(x));
}

/**
 * `leafTarget`, and for an intermediate whose gradient the running walk holds in a block of its
 * own: that block, added to (`acc` 1). Null otherwise: the op returns a fresh gradient.
 */
export function gradTarget(ctx: CudaContext, x: CudaTensor): CudaGradTarget | null {
  return flag(ctx.tape.gradTarget(x));
}
