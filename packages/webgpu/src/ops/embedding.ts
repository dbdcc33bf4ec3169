/*
 * Embedding on GPU tensors, mirroring @loop/tensor's embedding(ids, W): ids an i32 tensor of any
 * shape, W [V, D] → y [...ids.shape, D]. The ids are not read back to be checked (no per-op
 * read-back): check them where they are uploaded; an out-of-range id gives a row of NaN.
 * Backward: the deterministic bucketed scatter-add of kernels/embedding.ts.
 */
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import {
  EMB_GROUP,
  embeddingBucketKernel,
  embeddingCountKernel,
  embeddingGatherKernel,
  embeddingRankKernel,
  embeddingScanKernel,
  embeddingSumKernel,
} from "../kernels/embedding.js";
import { recordGpu } from "../tape.js";
import { fillInPlace } from "./elementwise-plain.js";

/** Rows of w [V, D] for i32 token ids on the GPU: [..., D]; differentiable in w. */
export function embedding(ids: GpuTensor, w: GpuTensor): GpuTensor {
  if (w.rank !== 2)
    throw new Error(`webgpu embedding: weight must be [V, D], got [${w.shape.join(",")}]`);
  if (ids.dtype !== "i32")
    throw new Error("webgpu embedding: ids must be an i32 tensor (upload an Int32Array)");
  const [V, D] = w.shape as [number, number];
  const ctx = ids.ctx;
  const n = ids.size;
  const y = emptyLike(ctx, [...ids.shape, D]);
  ctx.run(embeddingGatherKernel, { ids, w, y }, { n, V, D }, grid(n * D, EMB_GROUP));
  recordGpu("embedding", [w], [y], ([g]) => {
    const count = emptyLike(ctx, [V], "i32");
    const cursor = emptyLike(ctx, [V], "i32");
    const start = emptyLike(ctx, [V], "i32");
    const bucket = emptyLike(ctx, [n], "i32");
    const order = emptyLike(ctx, [n], "i32");
    // Zero bits are the integer zero too.
    fillInPlace(count, 0);
    fillInPlace(cursor, 0);
    const nIds = grid(n, EMB_GROUP);
    ctx.run(embeddingCountKernel, { ids, count }, { n, V }, nIds);
    ctx.run(embeddingScanKernel, { count, start }, { V }, [1]);
    const ranked = { ids, start };
    ctx.run(embeddingBucketKernel, { ...ranked, cursor, bucket }, { n, V }, nIds);
    ctx.run(embeddingRankKernel, { ...ranked, count, bucket, order }, { n, V }, nIds);
    const gw = emptyLike(ctx, w.shape);
    ctx.run(
      embeddingSumKernel,
      { start, count, order, g: g!, gw },
      { V, D },
      grid(V * D, EMB_GROUP),
    );
    return [gw];
  });
  return y;
}
