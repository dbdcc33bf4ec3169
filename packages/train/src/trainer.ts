/**
 * The training loop core, free of file I/O: one optimizer step = gradAccum micro-batches of
 * forward + backward, global-norm clipping, AdamW with the warmup-cosine learning rate. A
 * non-finite loss or gradient norm raises `NonFiniteError` before any weight changes, so the last
 * good state (and checkpoint) stays intact. State (weights are the model's own; optimizer moments,
 * step, data cursor) is exported for exact resume. With a `StepEngine` (a GPU) the engine computes
 * each step (`nextStep`) and `sync` brings its weights and moments back before a checkpoint.
 */
import type { LoopedModel } from "@loop/looped";
import { checkTaskVocab, type Task, type TaskCursor } from "@loop/tasks";
import {
  AdamW,
  type AdamWState,
  backward,
  clipGradNorm,
  gradNorm,
  IntTensor,
  type NamedParameter,
  releaseGrads,
  threadGovernor,
  warmupCosine,
  withScratch,
} from "@loop/tensor";
import { withBlockLr } from "./block-lr.js";
import { checkFrozenForStage, stageLoss, trainableParameters } from "./objective.js";
import { adamwOptions, type TrainOptions } from "./options.js";
import type { StepEngine } from "./step-engine.js";
import { meanLoss, microBatchWeight, nonFiniteWhat } from "./step-rules.js";

export class NonFiniteError extends Error {
  override name = "NonFiniteError";
  constructor(
    readonly step: number,
    what: string,
  ) {
    super(`non-finite ${what} at step ${step}; training stopped before updating the weights`);
  }
}

export interface StepMetrics {
  step: number;
  loss: number;
  lr: number;
  grad_norm: number;
  tokens_per_s: number;
  elapsed_s: number;
}

export interface TrainerState {
  step: number;
  cursor: TaskCursor;
  optimizer: AdamWState;
  elapsed_s: number;
}

export class Trainer {
  readonly model: LoopedModel;
  readonly task: Task;
  readonly opts: TrainOptions;
  readonly params: NamedParameter[];
  readonly optimizer: AdamW;
  private readonly schedule: (s: number) => number;
  /** Optimizer steps completed. */
  step = 0;
  cursor: TaskCursor;
  elapsed = 0;
  /** Where the steps run when not on the CPU kernels (null: here). */
  readonly engine: StepEngine | null;

  constructor(
    model: LoopedModel,
    task: Task,
    opts: TrainOptions,
    engine: StepEngine | null = null,
  ) {
    this.engine = engine;
    checkTaskVocab(task, model.config.vocab_size);
    this.model = model;
    this.task = task;
    this.opts = opts;
    checkFrozenForStage(model, opts.stage);
    this.params = withBlockLr(model, trainableParameters(model, opts.stage), opts.blockLr);
    if (engine && opts.blockLr !== "full")
      throw new Error(
        `train: blockLr "${opts.blockLr}" is not supported on ${engine.name} (only on the CPU)`,
      );
    if (!engine && (opts.precision ?? "fp32") !== "fp32")
      throw new Error(
        `train: precision "${opts.precision}" needs a device backend (webgpu); the CPU trains in fp32`,
      );
    this.optimizer = new AdamW(this.params, adamwOptions(opts));
    this.schedule = warmupCosine({
      peakLr: opts.lr,
      warmupSteps: opts.warmupSteps,
      totalSteps: opts.scheduleSteps ?? opts.steps,
      minLr: opts.minLr,
    });
    this.cursor = task.startCursor(opts.seed);
  }

  get done(): boolean {
    return this.step >= this.opts.steps;
  }

  /** One optimizer step on the engine when there is one, else `trainStep`. */
  async nextStep(): Promise<StepMetrics> {
    if (!this.engine) return this.trainStep();
    const t0 = performance.now();
    let cursor = this.cursor;
    const batches = [];
    for (let m = 0; m < this.opts.gradAccum; m++) {
      const next = this.task.trainBatch(cursor, this.opts.batchSize);
      cursor = next.cursor;
      batches.push(next.batch);
    }
    const lr = this.schedule(this.step);
    const r = await this.engine.step(batches, lr);
    const bad = nonFiniteWhat(r.loss, r.gradNorm);
    if (bad) throw new NonFiniteError(this.step + 1, bad);
    return this.finish(
      t0,
      cursor,
      r.loss,
      r.gradNorm,
      lr,
      batches.length * batches[0]!.tokens.length,
    );
  }

  /** Bring the engine's weights (into the model) and moments (into `optimizer`) back; no-op without one. */
  async sync(): Promise<void> {
    if (this.engine) this.optimizer.setState(await this.engine.pull());
  }

  /**
   * Run one optimizer step and return its metrics. Activations live in pooled scratch memory,
   * except with activation checkpointing: the pool only reclaims at the end of a step, which
   * would keep every recomputed activation alive and undo the memory saving.
   */
  trainStep(): StepMetrics {
    // an installed thread governor picks this step's thread count from the steps' times
    const gov = threadGovernor();
    gov?.beforeStep();
    const t0 = performance.now();
    const m = this.opts.checkpointing ? this.step1() : withScratch(() => this.step1());
    gov?.afterStep(performance.now() - t0);
    return m;
  }

  private step1(): StepMetrics {
    const t0 = performance.now();
    const { batchSize, gradAccum } = this.opts;
    releaseGrads(this.params); // last step's buffers are rewritten, not reallocated
    let cursor = this.cursor;
    const losses: number[] = [];
    let tokens = 0;
    for (let m = 0; m < gradAccum; m++) {
      const next = this.task.trainBatch(cursor, batchSize);
      cursor = next.cursor;
      const { batch } = next;
      const loss = stageLoss(
        this.model,
        new IntTensor(batch.tokens, batch.shape),
        new IntTensor(batch.targets, batch.shape),
        this.opts,
        batch.seqIdx ?? null,
      );
      const v = loss.item();
      const badLoss = nonFiniteWhat(v);
      if (badLoss) throw new NonFiniteError(this.step + 1, badLoss);
      losses.push(v);
      tokens += batch.tokens.length;
      backward(loss, [Float32Array.of(microBatchWeight(gradAccum))]);
    }
    // The CPU's own clipping (the norm in double), not `clipGradients`: same rule, same bits.
    const norm =
      this.opts.clip > 0 ? clipGradNorm(this.params, this.opts.clip) : gradNorm(this.params);
    const stepLoss = meanLoss(losses);
    const bad = nonFiniteWhat(stepLoss, norm);
    if (bad) throw new NonFiniteError(this.step + 1, bad);
    const lr = this.schedule(this.step);
    this.optimizer.step(lr);
    return this.finish(t0, cursor, stepLoss, norm, lr, tokens);
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

  getState(): TrainerState {
    return {
      step: this.step,
      cursor: { ...this.cursor },
      optimizer: this.optimizer.getState(),
      elapsed_s: this.elapsed,
    };
  }

  /**
   * Restore `st` (the model's weights were loaded with it); an engine gets the weights and the
   * moments too. With an engine call `sync` first when the state is for a checkpoint.
   */
  setState(st: TrainerState): void {
    this.step = st.step;
    this.cursor = { ...st.cursor };
    this.optimizer.setState(st.optimizer);
    this.elapsed = st.elapsed_s;
    this.engine?.push(st.optimizer);
  }
}
