/*
 * Gate logits on GPU tensors, as @loop/exit-gate's gateLogits: readouts R × [...S, D],
 * weight [1, D], bias [1] → a [R, ...S] with a[r, m] = weight·readout(r)[m] + bias; one fused
 * node (kernels/gate-logits.ts), all gradient sums in a fixed order.
 */
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid, groups } from "../kernel-def.js";
import {
  GATE_CHUNK,
  GATE_COLS,
  GATE_EW,
  gateDotKernel,
  gateInputKernel,
  gateWeightPartialKernel,
} from "../kernels/gate-logits.js";
import { freshGrads, recordGpu } from "../tape.js";
import { sumColumns } from "./column-sum.js";
import { checkPerStep, checkShape } from "./gate-shapes.js";

/**
 * Gate logits [R, …] from every loop step's readouts, weight [1, D] and bias [1] on the GPU;
 * differentiable.
 */
export function gateLogits(
  readouts: readonly GpuTensor[],
  weight: GpuTensor,
  bias: GpuTensor,
): GpuTensor {
  const op = "webgpu gateLogits";
  const s = checkPerStep(readouts, "readouts", op);
  const D = s[s.length - 1]!;
  checkShape(weight, [1, D], "weight", op);
  checkShape(bias, [1], "bias", op);
  const ctx = weight.ctx;
  const R = readouts.length;
  const M = D === 0 ? 0 : readouts[0]!.size / D;
  const a = emptyLike(ctx, [R, ...s.slice(0, -1)]);
  readouts.forEach((x, r) => {
    ctx.run(gateDotKernel, { x, w: weight, bias, a }, { rows: M, D, off: r * M }, grid(M, 1));
  });
  recordGpu("gateLogits", [...readouts, weight, bias], [a], ([g]) => {
    const grads = freshGrads(readouts, (gx, _, r) =>
      ctx.run(
        gateInputKernel,
        { g: g!, w: weight, gx },
        { n: M * D, D, off: r * M },
        grid(M * D, GATE_EW),
      ),
    );
    let gw: GpuTensor | null = null;
    if (weight.requiresGrad) {
      const chunks = groups(M, GATE_CHUNK);
      const part = emptyLike(ctx, [R * chunks, D]);
      readouts.forEach((x, r) => {
        ctx.run(
          gateWeightPartialKernel,
          { g: g!, x, part },
          { M, D, off: r * M, partRow: r * chunks },
          [groups(D, GATE_COLS), chunks, 1],
        );
      });
      gw = sumColumns(part, D, weight.shape);
    }
    const gb = bias.requiresGrad ? sumColumns(g!, 1) : null;
    grads.push(gw, gb);
    return grads;
  });
  return a;
}
