/**
 * Evaluation on the webgpu backend: each batch's per-step logits (and the exit pdf) computed by
 * the GPU looped model without a tape, read back, and scored by @loop/eval's evaluators
 * (`evaluateAccuracy`, `evaluatePerplexity` take the source in place of a model) exactly as on
 * the CPU.
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
import type { LoopedModel } from "@loop/looped";
import type { Batch } from "@loop/tasks";
import { tensor } from "@loop/tensor";
import {
  exitPdf,
  GpuLoopedModel,
  type GpuTensor,
  gpuNoGrad,
  releaseTransients,
  uploadTensor,
} from "@loop/webgpu";
import type { ComputeBackend } from "./backend.js";

async function toCpu(t: GpuTensor) {
  return tensor(await t.read(), [...t.shape]);
}

export function gpuOutputSource(gm: GpuLoopedModel): StepOutputSource {
  const ctx = gm.ctx;
  return {
    config: gm.config,
    hasGate: gm.hasExitGate,
    async outputs(batch: Batch, gate: boolean): Promise<StepOutputs> {
      const [B, T] = batch.shape;
      try {
        const { logits, pdf } = gpuNoGrad(() => {
          const tokens = uploadTensor(ctx, batch.tokens, [B, T]);
          const seqIdx = batch.seqIdx ? uploadTensor(ctx, batch.seqIdx, [B * T]) : null;
          const fwd = gm.forward(tokens, { steps: "all", seqIdx });
          const pdf = gate && gm.hasExitGate ? exitPdf(gm.gateLogits(fwd.readouts)) : null;
          return { logits: fwd.logits, pdf };
        });
        const cpuLogits = [];
        for (const l of logits) cpuLogits.push(await toCpu(l));
        return { logits: cpuLogits, pdf: pdf ? await toCpu(pdf) : null };
      } finally {
        releaseTransients(ctx);
      }
    },
  };
}

/**
 * Accuracy or perplexity of `model` on `batches` on `backend`: on its device when it has one,
 * else the CPU evaluators.
 */
export async function evaluateOnBackend(
  backend: ComputeBackend,
  model: LoopedModel,
  batches: readonly Batch[],
  metric: "ppl" | "accuracy",
  opts: AccuracyOptions & PerplexityOptions = {},
): Promise<AccuracyResult | PerplexityResult> {
  const gpu = backend.gpu;
  const gm = gpu ? GpuLoopedModel.fromModel(gpu, model) : null;
  try {
    const source = gm ? gpuOutputSource(gm) : model;
    return metric === "ppl"
      ? await evaluatePerplexity(source, batches, opts)
      : await evaluateAccuracy(source, batches, opts);
  } finally {
    gm?.dispose();
  }
}
