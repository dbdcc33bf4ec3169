/*
 * The exit gate's ops of `ExitGateOps` (@loop/tensor; docs/exit-gate.md) on the CUDA backend:
 * gateLogits (a row dot per step), exitPdf (log space, double, per position), and the stage
 * objectives: the per-step cross-entropies (kernels/loss.cu `ce_rows`, one launch per step),
 * the per-position objective and a one-block masked mean. Stage 2 reads the per-step losses as
 * constants and the readouts detached, so only the gate's parameters get gradients.
 */
import {
  DEFAULT_BETA,
  DEFAULT_GAMMA,
  DEFAULT_K,
  type GateLike,
  type Stage1Options,
  type Stage2Options,
} from "@loop/tensor";
import type { CudaContext } from "../context.js";
import { CudaTensor } from "../cuda-tensor.js";
import { GATE_MAX_STEPS } from "../kernel-table.js";
import { leafTarget, record } from "../tape.js";
import { expect, expectShape, rowsOf } from "./shapes.js";
import { crossEntropyRows } from "./tensor-ops.js";

function steps(op: string, a: CudaTensor): { R: number; M: number } {
  const R = a.shape[0] ?? 0;
  expect(
    R >= 1 && R <= GATE_MAX_STEPS,
    `${op}: ${R} loop steps (the kernels take 1 to ${GATE_MAX_STEPS})`,
  );
  return { R, M: a.size / R };
}

/** a [R, ...S] from readouts R × [...S, D], weight [1, D], bias [1]. */
export function gateLogits(
  ctx: CudaContext,
  readouts: readonly CudaTensor[],
  weight: CudaTensor,
  bias: CudaTensor,
): CudaTensor {
  const op = "gateLogits";
  expect(readouts.length > 0, `${op}: no readouts`);
  const first = readouts[0]!;
  for (const r of readouts) expectShape(op, "readout", r, first.shape);
  const { rows: M, cols: D } = rowsOf(first);
  expectShape(op, "weight", weight, [1, D]);
  expectShape(op, "bias", bias, [1]);
  const R = readouts.length;
  const a = ctx.empty([R, ...first.shape.slice(0, -1)]);
  readouts.forEach((x, r) => {
    ctx.run("gate_fwd", ctx.elems(M * 32, 128), [M, D, x, weight, bias, ctx.view(a, [M], r * M)]);
  });
  record(ctx, op, [...readouts, weight, bias], [a], ([g]) => {
    const gr = (r: number) => ctx.view(g!, [M], r * M);
    const out: (CudaTensor | null)[] = readouts.map((x, r) => {
      if (!x.requiresGrad) return null;
      const gx = ctx.empty(x.shape);
      ctx.run("gate_gx", ctx.elems(M * D), [M, D, gr(r), weight, gx, 0]);
      return gx;
    });
    let gw: CudaTensor | null = null;
    if (weight.requiresGrad) {
      const target = leafTarget(ctx, weight);
      const dst = target?.out ?? ctx.empty(weight.shape);
      readouts.forEach((x, r) => {
        ctx.run("gate_gw", ctx.elems(D, 128), [
          M,
          D,
          gr(r),
          x,
          dst,
          r > 0 ? 1 : (target?.acc ?? 0),
        ]);
      });
      gw = target ? null : dst;
    }
    let gb: CudaTensor | null = null;
    if (bias.requiresGrad) {
      const target = leafTarget(ctx, bias);
      const dst = target?.out ?? ctx.empty([1]);
      ctx.run("sum_all", ctx.rows(1), [R * M, g!, dst, target?.acc ?? 0]);
      gb = target ? null : dst;
    }
    out.push(gw, gb);
    return out;
  });
  return a;
}

/** p(r) [R, ...S] from gate logits a [R, ...S]. */
export function exitPdf(ctx: CudaContext, a: CudaTensor): CudaTensor {
  const { R, M } = steps("exitPdf", a);
  const p = ctx.empty(a.shape);
  ctx.run("exit_pdf_fwd", ctx.elems(M, 128), [R, M, a, p]);
  record(ctx, "exitPdf", [a], [p], ([g]) => {
    const ga = ctx.empty(a.shape);
    ctx.run("exit_pdf_bwd", ctx.elems(M, 128), [R, M, g!, a, ga, 0]);
    return [ga];
  });
  return p;
}

/** ℓ [R, M] and each step's logsumexp from per-step logits R × [...S, V]. */
function perStepCe(
  ctx: CudaContext,
  logitsPerStep: readonly CudaTensor[],
  targets: CudaTensor,
  R: number,
  M: number,
): { ce: CudaTensor; lse: CudaTensor[]; V: number } {
  expect(
    logitsPerStep.length === R,
    `stage loss: ${logitsPerStep.length} steps of logits, expected R = ${R}`,
  );
  expect(targets.size === M, `stage loss: ${targets.size} targets for ${M} positions`);
  const ce = ctx.empty([R, M]);
  let V = 0;
  const lse = logitsPerStep.map((l, r) => {
    const rows = crossEntropyRows(ctx, l, targets, ctx.view(ce, [M], r * M));
    V = rows.V;
    return rows.lse;
  });
  return { ce, lse, V };
}

/** The stage-1 objective L1 (into the gate logits and the per-step logits). */
export function stage1Loss(
  ctx: CudaContext,
  a: CudaTensor,
  logitsPerStep: readonly CudaTensor[],
  targets: CudaTensor,
  opts: Stage1Options = {},
): CudaTensor {
  const { R, M } = steps("stage1Loss", a);
  const beta = opts.beta ?? DEFAULT_BETA;
  const { ce, lse, V } = perStepCe(ctx, logitsPerStep, targets, R, M);
  const f = ctx.empty([M]);
  ctx.run("stage1_fwd", ctx.elems(M, 128), [R, M, beta, a, ce, f]);
  const out = ctx.empty([1]);
  const count = ctx.empty([1]);
  ctx.run("masked_mean", ctx.rows(1), [M, targets, f, 1, out, count]);
  record(ctx, "stage1Loss", [a, ...logitsPerStep], [out], ([g]) => {
    const ga = a.requiresGrad ? ctx.empty(a.shape) : null;
    const gce = ctx.empty([R, M]);
    ctx.run("stage1_bwd", ctx.elems(M, 128), [R, M, beta, g!, count, a, ce, targets, ga, gce]);
    const gl = logitsPerStep.map((l, r) => {
      if (!l.requiresGrad) return null;
      const gx = ctx.empty(l.shape);
      ctx.run("ce_rows_bwd", ctx.rows(M), [
        V,
        ctx.view(gce, [M], r * M),
        l,
        targets,
        lse[r]!,
        gx,
        0,
      ]);
      return gx;
    });
    return [ga, ...gl];
  });
  return out;
}

/** A view of `t` that records no gradient path (stage 2's detached readouts). */
function detach(ctx: CudaContext, t: CudaTensor): CudaTensor {
  return new CudaTensor(ctx, t.shape, t.dtype, t.persistent, t.owner, t.base ? t.byteOffset : 0);
}

/** The stage-2 objective L2 (into the gate only: readouts detached, per-step losses constant). */
export function stage2Loss(
  ctx: CudaContext,
  gate: GateLike<CudaTensor>,
  readouts: readonly CudaTensor[],
  logitsPerStep: readonly CudaTensor[],
  targets: CudaTensor,
  opts: Stage2Options = {},
): CudaTensor {
  const R = readouts.length;
  expect(
    logitsPerStep.length === R,
    `stage2Loss: logitsPerStep has ${logitsPerStep.length} steps, expected ${R} like readouts`,
  );
  const M = targets.size;
  const { ce } = ctx.withRecording(false, () => perStepCe(ctx, logitsPerStep, targets, R, M));
  const a = gate.logits(readouts.map((r) => detach(ctx, r)));
  steps("stage2Loss", a);
  const k = opts.k ?? DEFAULT_K;
  const gamma = opts.gamma ?? DEFAULT_GAMMA;
  const f = ctx.empty([M]);
  ctx.run("stage2_fwd", ctx.elems(M, 128), [R, M, k, gamma, a, ce, f]);
  const out = ctx.empty([1]);
  const count = ctx.empty([1]);
  ctx.run("masked_mean", ctx.rows(1), [M, targets, f, R, out, count]);
  record(ctx, "stage2Loss", [a], [out], ([g]) => {
    const ga = ctx.empty(a.shape);
    ctx.run("stage2_bwd", ctx.elems(M, 128), [R, M, k, gamma, g!, count, a, ce, targets, ga]);
    return [ga];
  });
  return out;
}
