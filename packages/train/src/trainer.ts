/*
 * The training loop core, free of file I/O: one optimizer step = gradAccum micro-batches of
 * forward + backward, global-norm clipping, AdamW with the warmup-cosine learning rate. A
 * non-finite loss or gradient norm raises `NonFiniteError` before any weight changes, so the last
 * good state (and checkpoint) stays intact. State (weights are the model's own; optimizer moments,
 * step, data cursor) is exported for exact resume. With a `StepEngine` (a GPU) the engine computes
 * each step (`nextStep`) and `sync` brings its weights and moments back before a checkpoint; a
 * pipelined engine keeps one step in flight when asked (`nextStep({ ahead })`, `drain`). Without
 * one the steps run on the CPU kernels the Trainer was given (a backend's, `CpuKernels`): each
 * step, its backward and its optimiser update, inside them, whatever another backend in the
 * process runs on between two steps. Either way the step is `encodeStep` (device-step-engine.ts)
 * on the backend's `TrainOps`; the CPU runs it synchronously on the model's own tensors.
 */
import { checkTaskVocab, type Task, type TaskCursor } from "@loop/tasks";
import {
  AdamW,
  type AdamWState,
  cpuTrainOps,
  exactNorm,
  type IntTensor,
  type NamedParameter,
  type Tensor,
  threadGovernor,
  warmupCosine,
  withScratch,
} from "@loop/tensor";
import { type CpuKernels, withKernels, withTemporaries } from "@loop/tensor/kernel";
import { withBlockLr } from "./block-lr.js";
import { type DeviceTraining, encodeStep, stepResult } from "./device-step-engine.js";
import type { LossScaleState } from "./loss-scale.js";
import { type TaskMicroBatches, taskMicroBatches } from "./micro-batches.js";
import { checkFrozenForStage, stageLoss, trainableParameters } from "./objective.js";
import { adamwOptions, type TrainOptions, trainWarnings } from "./options.js";
import type { StepEngine, StepResult } from "./step-engine.js";
import { nonFiniteWhat } from "./step-rules.js";
import type { TrainableModel } from "./trainable-model.js";

/**
 * Thrown when a step's loss or gradient norm is not finite; the weights are left as they were
 * before the step.
 */
export class NonFiniteError extends Error {
  /** The error's name. */
  override name = "NonFiniteError";
  constructor(
    readonly step: number,
    what: string,
  ) {
    super(`non-finite ${what} at step ${step}; training stopped before updating the weights`);
  }
}

/**
 * What one training step reports: step number, loss, learning rate, gradient norm, throughput and
 * time.
 */
export interface StepMetrics {
  step: number;
  loss: number;
  lr: number;
  grad_norm: number;
  tokens_per_s: number;
  elapsed_s: number;
}

/**
 * The Trainer's resumable state: step, data cursor, optimiser moments, elapsed time (and loss
 * scale).
 */
export interface TrainerState {
  step: number;
  cursor: TaskCursor;
  optimizer: AdamWState;
  elapsed_s: number;
  /** The engine's loss scale, under mixed precision. */
  lossScale?: LossScaleState;
}

/** A step queued on the engine: its result to come and what its report needs. */
interface InFlight {
  result: Promise<StepResult>;
  t0: number;
  cursor: TaskCursor;
  lr: number;
  tokens: number;
}

/** How often (ms) a long step says how far it has got (a test sets 0: a line per micro-batch). */
export const STEP_PROGRESS = { ms: 10_000 };

/**
 * The training loop core, without file I/O: each step is gradAccum micro-batches of forward +
 * backward, global-norm clipping and AdamW on the warmup-cosine schedule, on the CPU kernels or a
 * `StepEngine` (a GPU); its state resumes exactly.
 */
export class Trainer {
  /** The model trained (its weights change in place). */
  readonly model: TrainableModel;
  /** The task the batches come from. */
  readonly task: Task;
  /** The training options, resolved. */
  readonly opts: TrainOptions;
  /** The parameters the stage trains, with their names and weight-decay flags. */
  readonly params: NamedParameter[];
  /** The optimiser, whose state `getState` saves. */
  readonly optimizer: AdamW;
  private readonly schedule: (s: number) => number;
  private readonly cpu: DeviceTraining<Tensor, IntTensor>;
  /** Optimizer steps completed. */
  step = 0;
  /** Where the training stream stands (the next batch comes after it). */
  cursor: TaskCursor;
  /** Training time so far in seconds, resumed runs included. */
  elapsed = 0;
  /** Where the steps run when not on the CPU kernels (null: here). */
  readonly engine: StepEngine | null;
  /** The CPU kernels the steps run on (null: those the kernel-set registry holds at each step). */
  readonly kernels: CpuKernels | null;
  /** Steps queued on the engine, not yet reported, in order. */
  private readonly inflight: InFlight[] = [];
  private reportedAt = 0;
  /** Hears the warnings and a long step's progress lines. */
  private readonly warn: (line: string) => void;

  /**
   * `model` prepared for `opts.stage` (`freezeForStage`); `engine` runs the steps elsewhere (a
   * GPU), `kernels` are the CPU kernels to step on; `warn` hears each of `trainWarnings(opts)`
   * (console.warn by default).
   */
  constructor(
    model: TrainableModel,
    task: Task,
    opts: TrainOptions,
    engine: StepEngine | null = null,
    kernels: CpuKernels | null = null,
    warn: (line: string) => void = console.warn,
  ) {
    for (const line of trainWarnings(opts)) warn(line);
    this.warn = warn;
    this.engine = engine;
    this.kernels = kernels;
    checkTaskVocab(task, model.config.vocab_size);
    this.model = model;
    this.task = task;
    this.opts = opts;
    checkFrozenForStage(model, opts.stage);
    this.params = withBlockLr(model, trainableParameters(model, opts.stage), opts.blockLr);
    if (!engine && (opts.precision ?? "fp32") !== "fp32")
      throw new Error(
        `train: precision "${opts.precision}" needs a device step engine on a backend that offers it; the CPU trains in fp32`,
      );
    this.optimizer = new AdamW(this.params, adamwOptions(opts));
    // the model's own tensors as the step's "device": the step written once (encodeStep)
    this.cpu = {
      name: "cpu",
      ops: cpuTrainOps,
      parameters: this.params,
      stageLoss: (tokens, targets, seqIdx) =>
        stageLoss(model, tokens, targets, opts, seqIdx ? seqIdx.data : null),
      pullWeights: async () => {},
      pushWeights: () => {},
      // Each micro-batch's pooled activations go back to the pool after its backward, so a step
      // of any --accum holds one micro-batch's. (With activation checkpointing nothing is pooled:
      // a pool would keep every recomputed activation alive until the scope ends.)
      ...(opts.checkpointing ? {} : { microBatchScope: withTemporaries }),
    };
    this.schedule = warmupCosine({
      peakLr: opts.lr,
      warmupSteps: opts.warmupSteps,
      totalSteps: opts.scheduleSteps ?? opts.steps,
      minLr: opts.minLr,
    });
    this.cursor = task.startCursor(opts.seed);
  }

  /** True once `opts.steps` steps have run. */
  get done(): boolean {
    return this.step >= this.opts.steps;
  }

  /**
   * One optimizer step on the engine when there is one, else `trainStep`. With `ahead` and a
   * pipelined engine the step after it is queued before this one's result is awaited (one step
   * in flight, reported by the next `nextStep` or `drain`): pass it only when nothing needs the
   * weights as they are after this step (no checkpoint, evaluation or exit follows it).
   */
  async nextStep(opts: { ahead?: boolean } = {}): Promise<StepMetrics> {
    if (!this.engine) return this.trainStep();
    if (this.inflight.length === 0) this.enqueue();
    if (opts.ahead && this.engine.pipelined && this.inflight.length < 2) this.enqueue();
    const f = this.inflight.shift()!;
    let r: StepResult;
    try {
      r = await f.result;
    } catch (e) {
      await this.abandon();
      throw e;
    }
    const bad = nonFiniteWhat(r.loss, r.gradNorm);
    if (bad) {
      await this.abandon();
      throw new NonFiniteError(this.step + 1, bad);
    }
    // With a step in flight the steps overlap: each is timed from the later of its start and
    // the previous report, so that the elapsed time is the wall-clock time.
    const t0 = Math.max(f.t0, this.reportedAt);
    const m = this.finish(t0, f.cursor, r.loss, r.gradNorm, f.lr, f.tokens);
    this.reportedAt = performance.now();
    return m;
  }

  /** Steps queued on the engine and not yet reported (0 or 1). */
  get inFlight(): number {
    return this.inflight.length;
  }

  /** Report the steps in flight (in order): before a checkpoint, an evaluation or an exit. */
  async drain(): Promise<StepMetrics[]> {
    const out: StepMetrics[] = [];
    while (this.inflight.length) out.push(await this.nextStep());
    return out;
  }

  /** Queue the next unqueued step on the engine (none past the last step). */
  private enqueue(): void {
    const engine = this.engine!;
    const k = this.step + this.inflight.length;
    if (k >= this.opts.steps && this.inflight.length > 0) return;
    const micro = this.microBatches(this.inflight.at(-1)?.cursor ?? this.cursor);
    const t0 = performance.now();
    const lr = this.schedule(k);
    const queued = engine.step(micro, lr);
    // Every micro-batch is made by now (the engine queues the whole step before it returns),
    // unless the step failed: then its own error comes first.
    const end = micro.end();
    const result = end
      ? queued
      : queued.then((): never => {
          throw new Error(
            `step engine ${engine.name} returned from step() before making its ${micro.count} micro-batches`,
          );
        });
    const { cursor, tokens } = end ?? { cursor: this.cursor, tokens: 0 };
    // Awaited by `nextStep`; a failure of a step that is abandoned must not go unhandled.
    result.catch(() => {});
    this.inflight.push({
      result,
      t0,
      cursor,
      lr,
      tokens,
    });
  }

  /** Wait for (and forget) the steps in flight after a failed one: the Trainer stops. */
  private async abandon(): Promise<void> {
    const left = this.inflight.splice(0);
    for (const f of left) await f.result.catch(() => {});
  }

  private assertIdle(what: string): void {
    if (this.inflight.length)
      throw new Error(
        `train: ${what} with ${this.inflight.length} step(s) in flight; drain() them first`,
      );
  }

  /** Bring the engine's weights (into the model) and moments (into `optimizer`) back; no-op without one. */
  async sync(): Promise<void> {
    this.assertIdle("sync");
    if (this.engine) this.optimizer.setState(await this.engine.pull());
  }

  /**
   * Run one optimizer step and return its metrics, on the Trainer's kernels when it has its own.
   * Activations live in pooled scratch memory, except with activation checkpointing: the pool
   * only reclaims at the end of a step, which would keep every recomputed activation alive and
   * undo the memory saving.
   */
  trainStep(): StepMetrics {
    return withKernels(this.kernels, () => {
      // an installed thread governor picks this step's thread count from the steps' times
      const gov = threadGovernor();
      gov?.beforeStep();
      const t0 = performance.now();
      const m = this.opts.checkpointing ? this.step1() : withScratch(() => this.step1());
      gov?.afterStep(performance.now() - t0);
      return m;
    });
  }

  private step1(): StepMetrics {
    const t0 = performance.now();
    // Each micro-batch is made when its turn comes: the step holds one at a time.
    const micro = this.microBatches(this.cursor);
    const { report, norm } = encodeStep(this.cpu, this.params, this.opts.clip, micro);
    // (encodeStep made every micro-batch, or threw)
    const { cursor, tokens } = micro.end()!;
    // the losses as computed (float32), the norm in double (cpuTrainOps)
    const { loss } = stepResult(report.data, micro.count);
    const gradNorm = exactNorm(norm);
    const bad = nonFiniteWhat(loss, gradNorm);
    if (bad) throw new NonFiniteError(this.step + 1, bad);
    const lr = this.schedule(this.step);
    this.optimizer.step(lr);
    return this.finish(t0, cursor, loss, gradNorm, lr, tokens);
  }

  /** The micro-batches of the step that starts at `cursor`, made when the step asks. */
  private microBatches(cursor: TaskCursor): TaskMicroBatches {
    const micro = taskMicroBatches(this.task, cursor, this.opts.gradAccum, this.opts.batchSize);
    // A step of many micro-batches (a large --accum) may run for minutes: a line every
    // STEP_PROGRESS.ms says how far it has got, so that it is never silent (the step runs
    // synchronously: the line is written from inside it, as each micro-batch is made).
    const t0 = performance.now();
    let said = t0;
    const step = this.step + this.inflight.length + 1;
    const at = micro.at.bind(micro);
    micro.at = (i) => {
      const now = performance.now();
      if (i > 0 && now - said >= STEP_PROGRESS.ms) {
        said = now;
        const s = (now - t0) / 1000;
        this.warn(
          `step ${step}: ${i} of ${micro.count} micro-batches in ${s.toFixed(0)} s, about ${((s / i) * (micro.count - i)).toFixed(0)} s left`,
        );
      }
      return at(i);
    };
    return micro;
  }

  private finish(
    t0: number,
    cursor: TaskCursor,
    loss: number,
    norm: number,
    lr: number,
    tokens: number,
  ): StepMetrics {
    this.step++;
    this.cursor = cursor;
    const dt = (performance.now() - t0) / 1000;
    this.elapsed += dt;
    return {
      step: this.step,
      loss,
      lr,
      grad_norm: norm,
      tokens_per_s: tokens / dt,
      elapsed_s: this.elapsed,
    };
  }

  /**
   * The resumable state (step, cursor, optimiser moments, time): with the model's weights, what a
   * checkpoint stores.
   */
  getState(): TrainerState {
    return {
      step: this.step,
      cursor: { ...this.cursor },
      optimizer: this.optimizer.getState(),
      elapsed_s: this.elapsed,
      ...(this.engine?.lossScaleState ? { lossScale: this.engine.lossScaleState() } : {}),
    };
  }

  /**
   * Restore `st` (the model's weights were loaded with it); an engine gets the weights and the
   * moments too. With an engine call `sync` first when the state is for a checkpoint.
   */
  setState(st: TrainerState): void {
    this.assertIdle("setState");
    this.step = st.step;
    this.cursor = { ...st.cursor };
    this.optimizer.setState(st.optimizer);
    this.elapsed = st.elapsed_s;
    this.engine?.push(st.optimizer);
    // a checkpoint of an fp32 run has none: a mixed-precision engine then starts from its init
    if (st.lossScale) this.engine?.setLossScaleState?.(st.lossScale);
  }
}
