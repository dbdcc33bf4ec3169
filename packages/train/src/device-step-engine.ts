/**
 * The training step on a backend's own tensors (a GPU), written once over `TrainOps`: the
 * `StepEngine` the Trainer drives. One step = zero the gradients; per micro-batch upload the
 * batch, the stage's loss, backward seeded with 1/micro-batches, free the micro-batch's
 * activations; the global gradient norm and clipping; ONE read-back of the losses and the norm
 * together; the AdamW update (`AdamWCore`) only when both are finite. Nothing else is read back,
 * so on a device the step's work is queued without a round trip.
 */
import type { Batch } from "@loop/tasks";
import {
  AdamWCore,
  type AdamWState,
  clipGradients,
  type TrainOps,
  type TrainParameter,
} from "@loop/tensor";
import { stageParameters } from "./objective.js";
import { adamwOptions, type TrainOptions } from "./options.js";
import type { StepEngine, StepResult } from "./step-engine.js";
import { meanLoss, microBatchWeight, nonFiniteWhat } from "./step-rules.js";

/** What a backend's copy of the model gives the step engine. */
export interface DeviceTraining<T, I> {
  /** For messages and run.json ("webgpu (SwiftShader …)"). */
  readonly name: string;
  readonly ops: TrainOps<T, I>;
  /** Every parameter of the device copy (the engine trains the stage's, freezes the others). */
  readonly parameters: readonly TrainParameter<T>[];
  /** The stage's loss of one micro-batch: a one-element tensor recorded on the tape. */
  stageLoss(tokens: I, targets: I, seqIdx: I | null): T;
  /** Copy the device weights into the CPU model (before a checkpoint or an evaluation). */
  pullWeights(): Promise<void>;
  /** Load the CPU model's weights into the device copy (after a resume). */
  pushWeights(): void;
  /** Free the device copy. */
  dispose?(): void;
}

export type DeviceStepEngine = StepEngine & { dispose(): void };

export function deviceStepEngine<T, I>(
  dev: DeviceTraining<T, I>,
  o: TrainOptions,
): DeviceStepEngine {
  const ops = dev.ops;
  const params = stageParameters(dev.parameters, o.stage);
  const trained = new Set(params.map((p) => p.tensor));
  for (const p of dev.parameters) ops.setTrainable(p.tensor, trained.has(p.tensor));
  const optimizer = new AdamWCore(ops, params, adamwOptions(o));
  const tensors = params.map((p) => p.tensor);

  async function step(batches: readonly Batch[], lr: number): Promise<StepResult> {
    const n = batches.length;
    if (n === 0) throw new Error(`${dev.name}: a step needs at least one batch`);
    ops.zeroGrads(tensors);
    // Slots 0..n−1: the micro-batch losses; slot n: the gradient norm. Read back once.
    const report = ops.scalars(n + 1);
    batches.forEach((b, i) => {
      const [B, T] = b.shape;
      if (b.tokens.length !== B * T || b.targets.length !== B * T)
        throw new Error(
          `${dev.name}: batch ${i} must hold B·T = ${B * T} tokens and targets, got ${b.tokens.length}/${b.targets.length}`,
        );
      const loss = dev.stageLoss(
        ops.uploadInt(b.tokens, [B, T]),
        ops.uploadInt(b.targets, [B, T]),
        b.seqIdx ? ops.uploadInt(b.seqIdx, [B * T]) : null,
      );
      ops.copyScalar(loss, report, i);
      ops.backward(loss, microBatchWeight(n));
      // This micro-batch's activations are no longer needed.
      ops.releaseTransients([report]);
    });
    ops.copyScalar(clipGradients(ops, params, o.clip), report, n);
    const values = await ops.read(report);
    const loss = meanLoss(values.subarray(0, n));
    const gradNorm = values[n]!;
    if (nonFiniteWhat(loss, gradNorm) === null) optimizer.step(lr);
    ops.releaseTransients();
    return { loss, gradNorm };
  }

  return {
    name: dev.name,
    step,
    async pull(): Promise<AdamWState> {
      await dev.pullWeights();
      return optimizer.readState();
    },
    push(state: AdamWState | null): void {
      dev.pushWeights();
      optimizer.setState(state ?? { step: 0, m: {}, v: {} });
    },
    dispose(): void {
      optimizer.dispose();
      ops.zeroGrads(tensors);
      dev.dispose?.();
    },
  };
}
