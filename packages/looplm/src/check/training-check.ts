/*
 * The training check of `looplm check`: a short run of each backbone (backbones.ts) on the
 * backend and on the CPU oracle from the same weights over the same p-hop batches; the backend's
 * loss must follow the oracle's at every step within a stated tolerance. fp32: |Δ| ≤ 1e-3 +
 * 1e-3·|loss| (each step's rounding differences feed the next weights, so the curves drift
 * apart slowly; a wrong gradient moves them apart by far more within a few steps). Mixed
 * precision (f16 GEMM operands, dynamic loss scale): 5e-2 + 5e-2·|loss|.
 */
import { LoopedModel, parseConfig } from "@loop/looped";
import { pHop } from "@loop/tasks";
import { deviceTraining, resolveTrainOptions } from "@loop/train";
import type { ComputeBackend } from "../backend.js";
import { deviceEngine } from "../device-engine.js";
import { BACKBONES, TINY_MODEL } from "./backbones.js";
import type { AnyOps, Tolerance } from "./op-cases.js";
import { type CaseResult, oracleOps, timedCase, worstOf } from "./op-conformance.js";

/** The loss curves' tolerance at each precision. */
export const TRAINING_TOL: Record<"fp32" | "mixed", Tolerance> = {
  fp32: { atol: 1e-3, rtol: 1e-3 },
  mixed: { atol: 5e-2, rtol: 5e-2 },
};

const task = pHop({ alphabet: 3, length: 10, hops: 1 });

/** The loss of each of `steps` steps of `backbone` on `ops` (a device step engine). */
async function lossCurve(
  ops: AnyOps,
  backbone: keyof typeof BACKBONES,
  steps: number,
  precision: "fp32" | "mixed",
): Promise<Float32Array> {
  const model = new LoopedModel(
    parseConfig({ vocab_size: task.vocabSize, ...TINY_MODEL, ...BACKBONES[backbone] }),
    { seed: 3 },
  );
  const o = resolveTrainOptions({ batchSize: 4, lr: 1e-2, warmupSteps: 0, seed: 1, precision });
  const dev = deviceTraining(model, ops, o);
  const engine = deviceEngine(dev, o);
  const losses = new Float32Array(steps);
  let cursor = task.startCursor(1);
  try {
    for (let s = 0; s < steps; s++) {
      const next = task.trainBatch(cursor, o.batchSize);
      cursor = next.cursor;
      losses[s] = (await engine.step([next.batch], o.lr)).loss;
    }
  } finally {
    engine.dispose();
    dev.dispose();
  }
  return losses;
}

/** `steps` training steps of `backbone` on the backend against the CPU oracle. */
export async function checkTraining(
  backend: ComputeBackend,
  backbone: keyof typeof BACKBONES,
  steps: number,
  precision: "fp32" | "mixed" = "fp32",
): Promise<CaseResult> {
  const tol = TRAINING_TOL[precision];
  const base = { name: `training ${backbone}, ${steps} steps, ${precision}`, op: "training", tol };
  try {
    return await timedCase(base, async () => {
      const want = await lossCurve(oracleOps(), backbone, steps, "fp32");
      const got = await lossCurve(backend.opsAt(precision) as AnyOps, backbone, steps, precision);
      const worst = worstOf("loss at step", got, want, tol);
      worst.what = `loss at step ${worst.index + 1}`;
      return worst;
    });
  } finally {
    // (back to fp32: a device that switches precision keeps the last one asked)
    backend.opsAt("fp32");
  }
}
