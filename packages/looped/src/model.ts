/**
 * The looped model N⊗R (docs/model.md §1): h(0) = embed(tokens); h(r) = M(h(r−1)) for r = 1..R with
 * the same N layers every step (then h(r) = norm_f(h(r)) when loop_norm); readout(r) =
 * norm_f(h(r)) (or h(r) itself with loop_norm); logits(r) = readout(r)·Wᵀ with W the LM head or,
 * tied, the embedding. Gradients of every shared weight sum over its R uses (the tape does it).
 */
import { ExitGate } from "@loop/exit-gate";
import {
  checkpoint,
  crossEntropy,
  embedding,
  type IntTensor,
  linear,
  type Module,
  type NamedParameter,
  parameter,
  Rng,
  rmsnorm,
  shapeStr,
  type Tensor,
} from "@loop/tensor";
import type { ModelConfig } from "./config.js";
import { Layer } from "./layer.js";
import { keepSteps, runLoop } from "./loop.js";
import { parameterSpecs } from "./shapes.js";

export interface ForwardOptions {
  /** "all": readout and logits of every loop step; "last": of step R only (pre-training). */
  steps?: "all" | "last";
  /** Recompute each loop step's activations in the backward pass instead of storing them. */
  checkpointing?: boolean;
  /** Skip the LM head (readouts only). */
  skipLogits?: boolean;
  /**
   * Packed documents: [B·T] document index per position (mamba_ssm's seq_idx, non-decreasing
   * along a row). Every layer of every loop step resets at a document start: SSM state and conv
   * history are dropped, attention sees only the query's own document.
   */
  seqIdx?: Int32Array | null;
}

export interface ForwardResult {
  /** readout(r) [B,T,D] for each returned step (all R, or only R). */
  readouts: Tensor[];
  /** logits(r) [B,T,V] for each returned step (empty with skipLogits). */
  logits: Tensor[];
  /** The 1-based loop step of each returned entry. */
  stepIndex: number[];
}

export interface ModelOptions {
  /** Seed for the §3 initialisation (default 0). */
  seed?: number;
}

export class LoopedModel implements Module {
  readonly config: ModelConfig;
  readonly embeddings: Tensor;
  readonly layers: Layer[];
  readonly normF: Tensor;
  readonly lmHead: Tensor | null;
  readonly exitGate: ExitGate | null;

  constructor(config: ModelConfig, opts: ModelOptions = {}) {
    this.config = config;
    const rng = new Rng(opts.seed ?? 0);
    const D = config.d_model;
    const V = config.vocab_size;
    this.embeddings = parameter(
      rng.child("embeddings").fillNormal(new Float32Array(V * D), 0, 0.02),
      [V, D],
      "embeddings",
    );
    this.layers = [];
    for (let i = 0; i < config.n_layers; i++)
      this.layers.push(new Layer(config, i, rng.child(`layers.${i}`)));
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
  }

  private checkSpecs(): void {
    const specs = parameterSpecs(this.config);
    const params = this.parameters();
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

  get headWeight(): Tensor {
    return this.lmHead ?? this.embeddings;
  }

  /** The state handed to the next loop step: norm_f(h) when loop_norm, else h. */
  endOfStep(h: Tensor): Tensor {
    return this.config.loop_norm ? rmsnorm(h, this.normF, this.config.norm_eps) : h;
  }

  /** readout(r) from h(r). */
  readout(h: Tensor): Tensor {
    return this.config.loop_norm ? h : rmsnorm(h, this.normF, this.config.norm_eps);
  }

  /** logits = readout · Wᵀ. */
  head(readout: Tensor): Tensor {
    return linear(readout, this.headWeight);
  }

  embed(tokens: IntTensor): Tensor {
    if (tokens.shape.length !== 2)
      throw new Error(`forward: tokens must be [B, T], got ${shapeStr(tokens.shape)}`);
    const [B, T] = tokens.shape as [number, number];
    if (B === 0 || T === 0)
      throw new Error(`forward: tokens must be non-empty, got ${shapeStr(tokens.shape)}`);
    return embedding(tokens, this.embeddings);
  }

  forward(tokens: IntTensor, opts: ForwardOptions = {}): ForwardResult {
    const blockParams = opts.checkpointing ? this.blockParameters() : [];
    const out: ForwardResult = { readouts: [], logits: [], stepIndex: [] };
    const seqIdx = opts.seqIdx ?? null;
    runLoop(this, this.embed(tokens), {
      layer: (l, h) => l.forward(h, seqIdx),
      wrapStep: opts.checkpointing ? (step, h) => checkpoint(step, h, blockParams) : undefined,
      after: keepSteps(this, out, (opts.steps ?? "all") === "all", opts.skipLogits ?? false),
    });
    return out;
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
