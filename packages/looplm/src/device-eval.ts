/*
 * Evaluation on a device backend: each batch's per-step logits (and the exit pdf) computed by
 * the device model (@loop/looped's `DeviceModel`, on any backend's ops) without a tape, read
 * back, and scored by @loop/eval's evaluators (`evaluateAccuracy`, `evaluatePerplexity` take the
 * source in place of a model) exactly as on the CPU.
 */
import {
  type AccuracyOptions,
  type AccuracyResult,
  evaluateAccuracy,
  evaluatePerplexity,
  type PerplexityOptions,
  type PerplexityResult,
  type StepOutputSource,
  type StepOutputs,
} from "@loop/eval";
import { exitPdfOn } from "@loop/exit-gate";
import { type DeviceModel, type LoopedModel, toDevice } from "@loop/looped";
import type { Batch } from "@loop/tasks";
import { type Precision, tensor } from "@loop/tensor";
import type { ComputeBackend } from "./backend.js";

/** The step outputs of `dm`, read back to the CPU, for the evaluators. */
export function deviceOutputSource<T, I>(dm: DeviceModel<T, I>): StepOutputSource {
  const ops = dm.ops;
  const toCpu = async (t: T) => tensor(await ops.read(t), [...ops.shapeOf(t)]);
  return {
    config: dm.config,
    hasGate: dm.hasExitGate,
    async outputs(batch: Batch, gate: boolean, readouts = false): Promise<StepOutputs> {
      const [B, T] = batch.shape;
      try {
        const { logits, pdf, ro } = ops.noGrad(() => {
          const tokens = ops.uploadInt(batch.tokens, [B, T]);
          const seqIdx = batch.seqIdx ? ops.uploadInt(batch.seqIdx, [B * T]) : null;
          const fwd = dm.forward(tokens, { steps: "all", seqIdx });
          const pdf = gate && dm.hasExitGate ? exitPdfOn(ops, dm.gateLogits(fwd.readouts)) : null;
          return { logits: fwd.logits, pdf, ro: readouts ? fwd.readouts : null };
        });
        const cpuLogits = [];
        for (const l of logits) cpuLogits.push(await toCpu(l));
        const out: StepOutputs = { logits: cpuLogits, pdf: pdf ? await toCpu(pdf) : null };
        if (ro) {
          out.readouts = [];
          for (const x of ro) out.readouts.push(await toCpu(x));
        }
        return out;
      } finally {
        ops.releaseTransients();
      }
    },
  };
}

/**
 * Accuracy or perplexity of `model` on `batches` on `backend`: on its device when it has one,
 * else the CPU evaluators on its kernels.
 */
export async function evaluateOnBackend(
  backend: ComputeBackend,
  model: LoopedModel,
  batches: Iterable<Batch>,
  metric: "ppl" | "accuracy",
  opts: Omit<AccuracyOptions & PerplexityOptions, "kernels"> & {
    /** The matrix products' precision (default fp32): one of the backend's. */
    precision?: Precision;
  } = {},
): Promise<AccuracyResult | PerplexityResult> {
  const { precision = "fp32", ...rest } = opts;
  const ops = backend.opsAt(precision);
  // the CPU backends score the model itself (no weight copy; the numbers are the same)
  const gm = backend.caps.memory === "device" ? toDevice(model, ops) : null;
  try {
    const source = gm ? deviceOutputSource(gm) : model;
    const o = { ...rest, kernels: backend.kernels };
    return metric === "ppl"
      ? await evaluatePerplexity(source, batches, o)
      : await evaluateAccuracy(source, batches, o);
  } finally {
    gm?.dispose();
  }
}
