/*
 * The exit distribution on GPU tensors, as @loop/exit-gate's exitPdf: gate logits a [R, ...S] →
 * p [R, ...S], p(r) = λ(r)·Π_{j<r}(1 − λ(j)) (r < R), p(R) = Π_{j<R}(1 − λ(j)), computed in log
 * space (kernels/exit-pdf.ts).
 */
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { groups } from "../kernel-def.js";
import { exitPdfBackwardKernel, exitPdfKernel, PDF_GROUP } from "../kernels/exit-pdf.js";
import { recordGpu } from "../tape.js";
import { checkStepMajor } from "./gate-shapes.js";

/**
 * The exit distribution from gate logits [R, …] on the GPU (as `exitPdf` of @loop/exit-gate);
 * differentiable.
 */
export function exitPdf(gateLogits: GpuTensor): GpuTensor {
  const { R, M } = checkStepMajor(gateLogits, "gateLogits", "webgpu exitPdf");
  const ctx = gateLogits.ctx;
  const pdf = emptyLike(ctx, gateLogits.shape);
  const wg: [number] = [groups(M, PDF_GROUP)];
  ctx.run(exitPdfKernel, { a: gateLogits, pdf }, { R, M }, wg);
  recordGpu("exitPdf", [gateLogits], [pdf], ([g]) => {
    const ga = emptyLike(ctx, gateLogits.shape);
    ctx.run(exitPdfBackwardKernel, { a: gateLogits, pdf, g: g!, ga }, { R, M }, wg);
    return [ga];
  });
  return pdf;
}
