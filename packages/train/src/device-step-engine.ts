/*
 * The training step on a backend's own tensors (a GPU), written once over `TrainOps`: the
 * `StepEngine` the Trainer drives. One step = zero the gradients; per micro-batch upload the
 * batch, the stage's loss, start it on the device (`flush`), backward seeded with 1/micro-batches,
 * free the micro-batch's activations; the global gradient norm and clipping; ONE read-back of the
 * losses and the norm together; the AdamW update (`AdamWCore`) only when both are finite.
 *
 * Where the ops have a device guard (`guardFinite`: WebGPU) that condition is checked on the
 * device: the update is queued before the read, `step` queues the whole step at once and only
 * its result waits, and the engine is `pipelined` — the Trainer queues step k+1 before awaiting
 * step k's result (one step in flight). Without one (the CPU) the read comes first.
 */
import type { Batch } from "@loop/tasks";
import {
  AdamWCore,
  type AdamWState,
  clipGradients,
  type StepOps,
  type TrainParameter,
} from "@loop/tensor";
import { asMicroBatches, type MicroBatches } from "./micro-batches.js";
import { stageParameters } from "./objective.js";
import { adamwOptions, type TrainOptions } from "./options.js";
import type { StepEngine, StepResult } from "./step-engine.js";
import { meanLoss, microBatchWeight, nonFiniteWhat } from "./step-rules.js";

/** What a backend's copy of the model gives the step engine. */
export interface DeviceTraining<T, I> {
  /** For messages and run.json ("webgpu (SwiftShader …)"). */
  readonly name: string;
  readonly ops: StepOps<T, I>;
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
  /**
   * Run one micro-batch's forward and backward so that what it allocates for itself is freed
   * when it ends (the CPU's pooled scratch memory): accumulating gradients over any number of
   * micro-batches then holds one micro-batch's activations at a time. Absent: run as it is
   * (a device frees them with `releaseTransients`).
   */
  microBatchScope?<R>(fn: () => R): R;
}

/** A step engine on a device that holds device memory until `dispose()`. */
export type DeviceStepEngine = StepEngine & { dispose(): void };

/**
 * A `StepEngine` running each training step (forward, backward, clipping, AdamW) on the device
 * model of `dev`, at full float32 precision.
 */
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

  // With a device guard (`guardFinite`) the update is conditioned on the device, so a step is
  // queued whole without waiting for its read: the next one can be queued at once.
  const guarded = ops.guardFinite !== undefined;
  const newGuard = () =>
    guarded ? ops.upload(Float32Array.of(1), [1], { persistent: true }) : null;
  let guard = newGuard();
  /** Optimizer steps counted before the first non-finite step (null: none seen). */
  let goodSteps: number | null = null;

  async function step(batches: readonly Batch[] | MicroBatches, lr: number): Promise<StepResult> {
    const micro = asMicroBatches(batches);
    const { report } = encodeStep(dev, params, o.clip, micro);
    const n = micro.count;
    if (guard === null) {
      const r = stepResult(await ops.read(report), n);
      if (nonFiniteWhat(r.loss, r.gradNorm) === null) optimizer.step(lr);
      ops.releaseTransients();
      return r;
    }
    // Queued whole: the guard drops to 0 (for good) when a loss or the norm is not finite, and
    // the update does nothing then; the read is started now and awaited by the caller only.
    ops.guardFinite!(report, guard);
    const before = optimizer.stepCount;
    optimizer.step(lr, guard);
    const pending = ops.read(report);
    ops.releaseTransients();
    const r = stepResult(await pending, n);
    if (goodSteps === null && nonFiniteWhat(r.loss, r.gradNorm) !== null) goodSteps = before;
    return r;
  }

  return {
    name: dev.name,
    step,
    pipelined: guarded,
    async pull(): Promise<AdamWState> {
      await dev.pullWeights();
      // The guarded updates after a non-finite step did nothing: count only those before it.
      if (goodSteps !== null) optimizer.setStepCount(goodSteps);
      return optimizer.readState();
    },
    push(state: AdamWState | null): void {
      dev.pushWeights();
      optimizer.setState(state ?? { step: 0, m: {}, v: {} });
      if (guard) {
        ops.dispose(guard);
        guard = newGuard();
      }
      goodSteps = null;
    },
    dispose(): void {
      optimizer.dispose();
      if (guard) ops.dispose(guard);
      ops.zeroGrads(tensors);
      dev.dispose?.();
    },
  };
}

/**
 * One step's work on `dev`'s ops, written once (the device engine's and the CPU Trainer's): zero
 * the gradients; per micro-batch (made when its turn comes, in `dev.microBatchScope`) upload the batch, the stage's loss, start it on the device
 * (`flush`), backward seeded with 1/micro-batches, free the micro-batch's activations; the global
 * gradient norm and clipping. `report` holds the micro-batch losses and, last, the norm (one
 * read-back: a copy of each loss outlives its micro-batch's tensors, joined with the norm at the
 * end); `norm` is the norm's own tensor. The update is the caller's, once both are finite.
 */
export function encodeStep<T, I>(
  dev: DeviceTraining<T, I>,
  params: readonly TrainParameter<T>[],
  clip: number,
  batches: MicroBatches,
): { report: T; norm: T } {
  const ops = dev.ops;
  const n = batches.count;
  if (n === 0) throw new Error(`${dev.name}: a step needs at least one batch`);
  ops.zeroGrads(params.map((p) => p.tensor));
  // The micro-batch losses, copied out of reach of each micro-batch's release.
  const losses: T[] = [];
  const scope = dev.microBatchScope?.bind(dev) ?? (<R>(fn: () => R) => fn());
  for (let i = 0; i < n; i++) scope(() => microBatch(i));
  function microBatch(i: number): void {
    const b = batches.at(i);
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
    losses.push(ops.noGrad(() => ops.affine(loss, 1, 0)));
    // The forward runs on the device while the backward is encoded.
    ops.flush?.();
    ops.backward(loss, microBatchWeight(n));
    // This micro-batch's activations are no longer needed.
    ops.releaseTransients(losses);
  }
  const norm = clipGradients(ops, params, clip);
  // Values 0..n−1: the micro-batch losses; value n: the gradient norm. Read back once.
  const report = ops.noGrad(() => ops.concat([...losses, norm], 0));
  return { report, norm };
}

/** The step's mean loss and gradient norm from its report's values. */
export function stepResult(values: Float32Array, n: number): StepResult {
  return { loss: meanLoss(values.subarray(0, n)), gradNorm: values[n]! };
}
