/*
 * A looped model on a backend (docs/architecture.md): every parameter of a CPU `LoopedModel`
 * uploaded once by its docs/model.md §6 name (persistent, trainable leaves), and the forward of
 * looped-forward.ts on the backend's ops. The trained values go back into a `LoopedModel` for
 * checkpoints and CPU evaluation (`copyTo`), and come from one after a CPU-side change such as a
 * resume (`copyFrom`). Generic in the backend's tensor types: `toDevice(model, gpuModelOps(ctx))`
 * is the WebGPU model, `toDevice(model, cpuBackendOps)` a copy on the CPU.
 */
import type { AutogradOps, ModelOps } from "@loop/tensor";

/**
 * What a device model runs on: a backend's kernels, with the autograd switches the model reads
 * (recording off for inference, activation checkpointing).
 */
export type DeviceModelOps<T, I> = ModelOps<T, I> & Pick<AutogradOps<T>, "noGrad" | "checkpoint">;

import { type Checkpointing, checkpointWrappers } from "./checkpointing.js";
import type { ModelConfig } from "./config.js";
import type { StepOutputsOf } from "./loop.js";
import {
  type LoopedCore,
  type LoopedForwardOptions,
  loopedCore,
  loopedForward,
} from "./looped-forward.js";
import { customMixerName } from "./mixer-factory.js";
import type { LoopedModel } from "./model.js";
import { isBlockParameter } from "./shapes.js";

/** A parameter on the backend, with its §6 name and weight-decay flag. */
export interface DeviceParameter<T> {
  readonly name: string;
  readonly tensor: T;
  readonly decay: boolean;
}

/**
 * Options of `DeviceModel.forward`: those of the CPU forward, with activation checkpointing through
 * the backend's op.
 */
export type DeviceForwardOptions<I> = Omit<
  LoopedForwardOptions<unknown, I>,
  "wrapStep" | "wrapLayer"
> & {
  /**
   * Activation checkpointing: each loop step (true, "step") or each layer application ("layer")
   * keeps only its output and is recomputed in the backward (the backend's `checkpoint` op; an
   * error where it has none); checkpointing.ts.
   */
  checkpointing?: Checkpointing;
};

/**
 * The looped model on any backend's `ModelOps` (a GPU's): the same forward as `LoopedModel`, on the
 * device's copy of the weights (made by `toDevice`).
 */
export class DeviceModel<T, I> {
  /** The backend ops the model runs on. */
  readonly ops: DeviceModelOps<T, I>;
  /** The model's configuration. */
  readonly config: ModelConfig;
  private readonly params: readonly DeviceParameter<T>[];
  private readonly byName: Map<string, T>;
  private readonly core: LoopedCore<T, I>;

  constructor(
    ops: DeviceModelOps<T, I>,
    config: ModelConfig,
    params: readonly DeviceParameter<T>[],
  ) {
    this.ops = ops;
    this.config = config;
    this.params = params;
    this.byName = new Map(params.map((p) => [p.name, p.tensor]));
    this.core = loopedCore(ops, config, this.weight);
  }

  /** The parameter named `name` (a programming error when absent: names come from the config). */
  readonly weight = (name: string): T => {
    const t = this.byName.get(name);
    if (t === undefined) throw new Error(`device model: no parameter named ${name}`);
    return t;
  };

  /** Every parameter with its §6 name and weight-decay flag, in the CPU model's order. */
  parameters(): DeviceParameter<T>[] {
    return [...this.params];
  }

  /** Whether the model has an exit gate (config exit_gate). */
  get hasExitGate(): boolean {
    return this.config.exit_gate;
  }

  /** tokens [B,T] → readout(r) and logits(r) of the kept loop steps (looped-forward.ts). */
  forward(tokens: I, opts: DeviceForwardOptions<I> = {}): StepOutputsOf<T> {
    const { checkpointing, ...rest } = opts;
    if (!checkpointing) return loopedForward(this.ops, this.core, this.weight, tokens, rest);
    const checkpoint = this.ops.checkpoint;
    if (!checkpoint)
      throw new Error(
        "device model: activation checkpointing is not implemented on this backend (its ops have no checkpoint)",
      );
    // What a loop step reads besides its input: every layer's weights, and norm_f with
    // loop_norm; a layer application: its own weights.
    const paramsWhere = (keep: (name: string) => boolean) =>
      this.params.filter((p) => keep(p.name)).map((p) => p.tensor);
    return loopedForward(this.ops, this.core, this.weight, tokens, {
      ...rest,
      ...checkpointWrappers<T>(
        checkpointing,
        (fn, x, ps) => checkpoint.call(this.ops, fn, x, ps),
        () => paramsWhere((n) => isBlockParameter(this.config, n)),
        (i) => paramsWhere((n) => n.startsWith(`backbone.layers.${i}.`)),
      ),
    });
  }

  /** The state the next loop step starts from: norm_f(h) with loop_norm, else h. */
  endOfStep(h: T): T {
    return this.core.endOfStep(h);
  }

  /** readout(r) of a loop step's h (h itself with loop_norm, else norm_f(h)). */
  readout(h: T): T {
    return this.core.readout(h);
  }

  /** Logits from readouts (the LM head, or the tied embedding). */
  head(readout: T): T {
    return this.core.head(readout);
  }

  /** Gate logits a [R, B, T] from readouts R × [B, T, D] (ExitGate.logits). */
  gateLogits(readouts: readonly T[]): T {
    return this.core.gateLogits(readouts);
  }

  /** Check that `model` has exactly these parameters (names and shapes). */
  private checkMatches(model: LoopedModel, op: string): void {
    const key = (name: string, shape: readonly number[]) => `${name}[${shape.join(",")}]`;
    const cpu = model.parameters().map((p) => key(p.name, p.tensor.shape));
    const mine = this.params.map((p) => key(p.name, this.ops.shapeOf(p.tensor)));
    if (cpu.join(" ") !== mine.join(" "))
      throw new Error(
        `device model ${op}: the CPU model's parameters differ from the device model's`,
      );
  }

  /** Every value back into `model`'s parameters (same config; waits for the backend). */
  async copyTo(model: LoopedModel): Promise<void> {
    this.checkMatches(model, "copyTo");
    const cpu = model.parameters();
    for (let i = 0; i < cpu.length; i++)
      cpu[i]!.tensor.data.set(await this.ops.read(this.params[i]!.tensor));
  }

  /** Overwrite the values on the backend with `model`'s, in place. */
  copyFrom(model: LoopedModel): void {
    this.checkMatches(model, "copyFrom");
    model.parameters().forEach((p, i) => {
      this.ops.write(this.params[i]!.tensor, p.tensor.data);
    });
  }

  /** Release every parameter (and its gradient) on the backend. */
  dispose(): void {
    for (const p of this.params) this.ops.dispose(p.tensor);
  }
}

/**
 * Upload every parameter of `model` through `ops` (persistent, requiring gradients). A model
 * with a custom mixer (ModelOptions.mixer) is refused: the device forward runs the built-in
 * mixers by their weights' names, and would silently compute another model.
 */
export function toDevice<T, I>(model: LoopedModel, ops: DeviceModelOps<T, I>): DeviceModel<T, I> {
  const i = model.layers.findIndex((l) => l.customMixer);
  if (i >= 0)
    throw new Error(
      `toDevice: layer ${i}'s mixer is a custom mixer (${customMixerName(model.layers[i]!.mixer)}, from ModelOptions.mixer); a device backend runs only the built-in Mamba-2 and attention mixers — train, evaluate and decode this model on the CPU`,
    );
  const params = model.parameters().map((p) => ({
    name: p.name,
    tensor: ops.upload(p.tensor.data, p.tensor.shape, { persistent: true, requiresGrad: true }),
    decay: p.decay,
  }));
  return new DeviceModel(ops, model.config, params);
}
