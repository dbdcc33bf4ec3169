/*
 * Activation checkpointing on the CUDA backend (`ModelOps.checkpoint`; the CPU's is
 * @loop/tensor's `checkpoint`): `fn(x)` runs without recording and its intermediate tensors go
 * back to the allocator at once, keeping only the output; the backward runs `fn` again on a
 * stand-in for x with recording on, walks back through that copy (the parameters' gradients
 * accumulate into their gradient blocks as in an unwrapped walk) and returns x's gradient to the
 * outer walk, then frees the recomputed activations. Memory: one tensor per wrapped call (a loop
 * step's output) instead of every activation inside it, for one extra forward of `fn`.
 */
import type { CudaContext } from "./context.js";
import { CudaTensor, nextTensorId } from "./cuda-tensor.js";
import { backwardWalk, record } from "./tape.js";

/** `fn(x)` checkpointed (see the file comment); `params` the trainable tensors `fn` reads. */
export function checkpoint(
  ctx: CudaContext,
  fn: (x: CudaTensor) => CudaTensor,
  x: CudaTensor,
  params: readonly CudaTensor[],
): CudaTensor {
  const inputs = [x, ...params];
  if (!ctx.recording || !inputs.some((t) => t.requiresGrad)) return fn(x);
  const first = nextTensorId();
  const y = ctx.withRecording(false, () => fn(x));
  ctx.releaseTransientsSince(first, [y]);
  record(ctx, "checkpoint", inputs, [y], ([g]) => {
    const again = nextTensorId();
    // a stand-in for x, where the recomputed graph ends: its gradient is returned
    const xin = new CudaTensor(
      ctx,
      x.shape,
      x.dtype,
      x.persistent,
      x.owner,
      x.base ? x.byteOffset : 0,
    );
    xin.requiresGrad = x.requiresGrad;
    const yr = ctx.withRecording(true, () => fn(xin));
    let gx: CudaTensor | null = null;
    if (yr.requiresGrad) [gx] = backwardWalk(ctx, yr, g!, [xin]);
    ctx.releaseTransientsSince(again, gx ? [gx] : []);
    return [x.requiresGrad ? gx : null, ...params.map(() => null)];
  });
  return y;
}
