/*
 * p-weighted mixtures over loop steps on GPU tensors, as @loop/exit-gate's mixtureLogits and
 * mixtureLogProbs: logits R × [...S, V], pdf [R, ...S] → [...S, V] (kernels/mixture.ts). The pdf
 * must be ≥ 0 (the CPU op checks it; the device cannot without a read-back).
 */
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import {
  MIX_EW,
  mixAccumulateKernel,
  mixLogFinishKernel,
  mixLogMaxKernel,
  mixLogProbsInputKernel,
  mixLogSumKernel,
  mixRowDotKernel,
  mixRowLseKernel,
  mixScaleRowsKernel,
} from "../kernels/mixture.js";
import { freshGrads, recordGpu } from "../tape.js";

const str = (s: readonly number[]) => `[${s.join(",")}]`;

/** A non-empty list of equal-shape tensors of rank ≥ 1 (one per loop step): their shape. */
function checkPerStep(xs: readonly GpuTensor[], op: string): readonly number[] {
  if (xs.length === 0)
    throw new Error(`${op}: logitsPerStep must hold at least one loop step, got 0`);
  const s = xs[0]!.shape;
  if (s.length < 1) throw new Error(`${op}: logitsPerStep[0] must have rank ≥ 1, got ${str(s)}`);
  xs.forEach((x, r) => {
    if (x.shape.join() !== s.join())
      throw new Error(
        `${op}: logitsPerStep[${r}] has shape ${str(x.shape)}, expected ${str(s)} like logitsPerStep[0]`,
      );
  });
  return s;
}

function check(logitsPerStep: readonly GpuTensor[], pdf: GpuTensor, op: string) {
  const s = checkPerStep(logitsPerStep, op);
  const R = logitsPerStep.length;
  const want = [R, ...s.slice(0, -1)];
  if (pdf.shape.join() !== want.join())
    throw new Error(`${op}: pdf has shape ${str(pdf.shape)}, expected ${str(want)}`);
  const V = s[s.length - 1]!;
  const M = V === 0 ? 0 : logitsPerStep[0]!.size / V;
  return { s, R, V, M, n: M * V, ctx: pdf.ctx };
}

/** ∂p [R, M] by a row reduction per step (plain dot, or the log-probs posterior form). */
function pdfGrad(
  logitsPerStep: readonly GpuTensor[],
  pdf: GpuTensor,
  g: GpuTensor,
  M: number,
  V: number,
  logProbs: { lse: GpuTensor; y: GpuTensor } | null,
): GpuTensor {
  const ctx = pdf.ctx;
  const gp = emptyLike(ctx, pdf.shape);
  // Without the posterior form lse and y are not read; any buffer binds.
  const lse = logProbs ? logProbs.lse.buffer : g.buffer;
  const y = logProbs ? logProbs.y.buffer : g.buffer;
  logitsPerStep.forEach((x, r) => {
    ctx.run(
      mixRowDotKernel,
      { x, g, lse, y, out: gp },
      { rows: M, V, off: r * M, posterior: logProbs ? 1 : 0 },
      grid(M, 1),
    );
  });
  return gp;
}

/** Σ_r p_r · logits(r) on the GPU (as `mixtureLogits` of @loop/exit-gate). */
export function mixtureLogits(logitsPerStep: readonly GpuTensor[], pdf: GpuTensor): GpuTensor {
  const { s, M, V, n, ctx } = check(logitsPerStep, pdf, "webgpu mixtureLogits");
  const y = emptyLike(ctx, s);
  logitsPerStep.forEach((x, r) => {
    ctx.run(
      mixAccumulateKernel,
      { x, pdf, y },
      { n, V, off: r * M, first: r === 0 ? 1 : 0 },
      grid(n, MIX_EW),
    );
  });
  recordGpu("mixtureLogits", [...logitsPerStep, pdf], [y], ([g]) => {
    const grads = freshGrads(logitsPerStep, (gx, _, r) =>
      ctx.run(mixScaleRowsKernel, { g: g!, pdf, gx }, { n, V, off: r * M }, grid(n, MIX_EW)),
    );
    grads.push(pdf.requiresGrad ? pdfGrad(logitsPerStep, pdf, g!, M, V, null) : null);
    return grads;
  });
  return y;
}

/** log Σ_r p_r · softmax(logits(r)) on the GPU (as `mixtureLogProbs` of @loop/exit-gate). */
export function mixtureLogProbs(logitsPerStep: readonly GpuTensor[], pdf: GpuTensor): GpuTensor {
  const { s, R, M, V, n, ctx } = check(logitsPerStep, pdf, "webgpu mixtureLogProbs");
  const lse = emptyLike(ctx, [R, M]);
  const mx = emptyLike(ctx, s);
  const y = emptyLike(ctx, s);
  logitsPerStep.forEach((x, r) => {
    ctx.run(mixRowLseKernel, { x, lse }, { rows: M, V, off: r * M }, grid(M, 1));
  });
  const io = (x: GpuTensor) => ({ x: x.buffer, pdf: pdf.buffer, lse: lse.buffer });
  logitsPerStep.forEach((x, r) => {
    ctx.run(
      mixLogMaxKernel,
      { ...io(x), mx },
      { n, V, off: r * M, first: r === 0 ? 1 : 0 },
      grid(n, MIX_EW),
    );
  });
  logitsPerStep.forEach((x, r) => {
    ctx.run(
      mixLogSumKernel,
      { ...io(x), mx, y },
      { n, V, off: r * M, first: r === 0 ? 1 : 0 },
      grid(n, MIX_EW),
    );
  });
  ctx.run(mixLogFinishKernel, { mx, y }, { n }, grid(n, MIX_EW));
  recordGpu("mixtureLogProbs", [...logitsPerStep, pdf], [y], ([g]) => {
    // ∂p is needed for ∂x too (its row sums), so it is computed whenever anything is.
    const gp = pdfGrad(logitsPerStep, pdf, g!, M, V, { lse, y });
    const grads = freshGrads(logitsPerStep, (gx, x, r) =>
      ctx.run(
        mixLogProbsInputKernel,
        { ...io(x), y, g: g!, gp, gx },
        { n, V, off: r * M },
        grid(n, MIX_EW),
      ),
    );
    grads.push(pdf.requiresGrad ? gp : null);
    return grads;
  });
  return y;
}
