/*
 * The looped model N⊗R (docs/model.md §1): h(0) = embed(tokens); h(r) = M(h(r−1)) for r = 1..R with
 * the same N layers every step (then h(r) = norm_f(h(r)) when loop_norm); readout(r) =
 * norm_f(h(r)) (or h(r) itself with loop_norm); logits(r) = readout(r)·Wᵀ with W the LM head or,
 * tied, the embedding. Gradients of every shared weight sum over its R uses (the tape does it).
 */
import { ExitGate } from "@loop/exit-gate";
import {
  checkpoint,
  crossEntropy,
  IntTensor,
  type Module,
  type NamedParameter,
  parameter,
  Rng,
  shapeStr,
  type Tensor,
  weightLookup,
} from "@loop/tensor";
import { type Checkpointing, checkpointWrappers } from "./checkpointing.js";
import type { ModelConfig } from "./config.js";
import { cpuBackendOps } from "./cpu-backend-ops.js";
import { Layer } from "./layer.js";
import type { StepOutputsOf } from "./loop.js";
import {
  type LoopedCore,
  type LoopedForwardOptions,
  loopedCore,
  loopedForward,
} from "./looped-forward.js";
import { customMixerName, type MixerFactory } from "./mixer-factory.js";
import { parameterSpecs } from "./shapes.js";

/** The forward's options (looped-forward.ts), with the CPU's checkpointing and host seqIdx. */
export interface ForwardOptions
  extends Pick<LoopedForwardOptions<Tensor, IntTensor>, "steps" | "skipLogits"> {
  /**
   * Recompute activations in the backward pass instead of storing them: each loop step's (true
   * or "step") or each layer application's ("layer"); checkpointing.ts.
   */
  checkpointing?: Checkpointing;
  /** Packed documents: [B·T] document index per position (every layer resets at a start). */
  seqIdx?: Int32Array | null;
}

/** readout(r) [B,T,D] and logits(r) [B,T,V] of each returned step, and its 1-based index. */
export type ForwardResult = StepOutputsOf<Tensor>;

/** Options of a new `LoopedModel`: the initialisation seed. */
export interface ModelOptions {
  /** Seed for the §3 initialisation (default 0). */
  seed?: number;
  /**
   * Builds each layer's mixer in place of the config's (the extension point, mixer-factory.ts):
   * the training forward, decoding, prefill and early-exit decoding all run the mixer it returns.
   */
  mixer?: MixerFactory;
}

/**
 * `config` with `mixer` naming the custom mixer its layers were built with (so a saved
 * config.json says which factory a load needs); an error when config.mixer names another one.
 */
function withMixerName(config: ModelConfig, layers: readonly Layer[]): ModelConfig {
  const names = [
    ...new Set(layers.filter((l) => l.customMixer).map((l) => customMixerName(l.mixer))),
  ];
  const built = names.join("+");
  if (config.mixer === undefined) return built ? { ...config, mixer: built } : config;
  if (config.mixer !== built)
    throw new Error(
      `LoopedModel: config.mixer is "${config.mixer}" but ModelOptions.mixer built ${built ? `"${built}"` : "no custom mixer"}`,
    );
  return config;
}

/**
 * The looped language model N⊗R on the CPU (docs/model.md): embeddings, N shared layers applied R
 * times, norm_f, the LM head and an optional exit gate, with seeded §3 initialisation.
 */
export class LoopedModel implements Module {
  /** The model's configuration, every default filled in. */
  readonly config: ModelConfig;
  /** Token embeddings [V, D] (also the LM head when `tie_embeddings`). */
  readonly embeddings: Tensor;
  /** The N shared layers, applied R times. */
  readonly layers: Layer[];
  /**
   * The final RMSNorm weight [D] (norm_f), before the readout (and between loop steps with
   * `loop_norm`).
   */
  readonly normF: Tensor;
  /** The untied LM head [V, D], or null when tied to the embeddings. */
  readonly lmHead: Tensor | null;
  /** The exit gate, or null for a model without one. */
  readonly exitGate: ExitGate | null;
  /** The maps around the loop on the CPU ops (looped-forward.ts). */
  private readonly core: LoopedCore<Tensor, IntTensor>;

  constructor(config: ModelConfig, opts: ModelOptions = {}) {
    const rng = new Rng(opts.seed ?? 0);
    const D = config.d_model;
    const V = config.vocab_size;
    this.embeddings = parameter(
      rng.child("embeddings").fillNormal(new Float32Array(V * D), 0, 0.02),
      [V, D],
      "embeddings",
    );
    if (config.mixer !== undefined && !opts.mixer)
      throw new Error(
        `LoopedModel: config.mixer is "${config.mixer}": its layers run that custom mixer; pass ModelOptions.mixer, the factory that builds it`,
      );
    this.layers = [];
    for (let i = 0; i < config.n_layers; i++)
      this.layers.push(new Layer(config, i, rng.child(`layers.${i}`), opts.mixer ?? null));
    this.config = withMixerName(config, this.layers);
    this.normF = parameter(new Float32Array(D).fill(1), [D], "norm_f");
    const bound = 1 / Math.sqrt(D);
    this.lmHead = config.tie_embeddings
      ? null
      : parameter(
          rng.child("lm_head").fillUniform(new Float32Array(V * D), -bound, bound),
          [V, D],
          "lm_head",
        );
    this.exitGate = config.exit_gate
      ? new ExitGate({ dModel: D }, { rng: rng.child("exit_gate"), namePrefix: "exit_gate." })
      : null;
    this.checkSpecs();
    // every layer mixes through its own mixer object, the one decoding steps
    this.core = loopedCore(cpuBackendOps, config, this.weight, (i, u, seq) =>
      this.layers[i]!.mixer.forward(u, seq ? seq.data : null),
    );
  }

  /** The parameter named `name` (docs/model.md §6). */
  readonly weight = weightLookup(this, "LoopedModel");

  /** The parameters against docs/model.md §6 (a custom mixer's own parameters excepted). */
  private checkSpecs(): void {
    const custom = this.layers
      .map((l, i) => (l.customMixer ? `backbone.layers.${i}.mixer.` : null))
      .filter((p) => p !== null);
    const builtin = (name: string) => !custom.some((p) => name.startsWith(p));
    const customLayers = new Set(this.layers.flatMap((l, i) => (l.customMixer ? [i] : [])));
    const specs = parameterSpecs(this.config, customLayers).filter((s) => builtin(s.name));
    const params = this.parameters().filter((p) => builtin(p.name));
    const got = params.map((p) => `${p.name}${shapeStr(p.tensor.shape)}`).join(" ");
    const want = specs.map((s) => `${s.name}${shapeStr(s.shape)}`).join(" ");
    if (got !== want)
      throw new Error(
        `LoopedModel: parameters do not match docs/model.md §6:\n got ${got}\nwant ${want}`,
      );
  }

  /** Every parameter with its docs/model.md §6 name, in a fixed order. */
  parameters(): NamedParameter[] {
    const ps: NamedParameter[] = [
      { name: "backbone.embeddings.weight", tensor: this.embeddings, decay: true },
    ];
    this.layers.forEach((l, i) => {
      for (const p of l.parameters()) ps.push({ ...p, name: `backbone.layers.${i}.${p.name}` });
    });
    ps.push({ name: "backbone.norm_f.weight", tensor: this.normF, decay: false });
    if (this.lmHead) ps.push({ name: "lm_head.weight", tensor: this.lmHead, decay: true });
    if (this.exitGate)
      for (const p of this.exitGate.parameters()) ps.push({ ...p, name: `exit_gate.${p.name}` });
    return ps;
  }

  /** Parameters of the shared block (layers, plus norm_f when loop_norm applies it each step). */
  private blockParameters(): Tensor[] {
    const ts = this.layers.flatMap((l) => l.parameters().map((p) => p.tensor));
    if (this.config.loop_norm) ts.push(this.normF);
    return ts;
  }

  /** The state handed to the next loop step: norm_f(h) when loop_norm, else h. */
  endOfStep(h: Tensor): Tensor {
    return this.core.endOfStep(h);
  }

  /** readout(r) from h(r). */
  readout(h: Tensor): Tensor {
    return this.core.readout(h);
  }

  /** logits = readout · Wᵀ. */
  head(readout: Tensor): Tensor {
    return this.core.head(readout);
  }

  /**
   * All loop steps' readout(r) [B,T,D] and logits(r) [B,T,V] of `tokens` [B,T] (or step R's only
   * with `steps: "last"`), recorded on the tape for `backward`.
   */
  forward(tokens: IntTensor, opts: ForwardOptions = {}): ForwardResult {
    const seqIdx = opts.seqIdx ? new IntTensor(opts.seqIdx, [opts.seqIdx.length]) : null;
    return loopedForward(cpuBackendOps, this.core, this.weight, tokens, {
      steps: opts.steps,
      skipLogits: opts.skipLogits,
      seqIdx,
      ...checkpointWrappers(
        opts.checkpointing,
        checkpoint,
        () => this.blockParameters(),
        (i) => this.layers[i]!.parameters().map((p) => p.tensor),
      ),
    });
  }

  /** Final-loop objective: mean CE of logits(R) over targets ≠ −100 (docs/model.md §1). */
  finalLoss(
    tokens: IntTensor,
    targets: IntTensor,
    opts: Omit<ForwardOptions, "steps"> = {},
  ): Tensor {
    const { logits } = this.forward(tokens, { ...opts, steps: "last" });
    return crossEntropy(logits[0]!, targets);
  }
}
