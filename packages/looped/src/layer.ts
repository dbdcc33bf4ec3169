/*
 * One pre-norm residual layer (docs/model.md §2): x ← x + mixer(rmsnorm(x)); a transformer layer then
 * also x ← x + mlp(rmsnorm(x)). The mixer is Mamba-2 (§3), attention (§4), or the one a
 * `MixerFactory` built (mixer-factory.ts); every path of the layer (forward, step, prefill,
 * absorb, a step on some rows) goes through that one object.
 */
import { AttentionMixer, SwiGluMlp } from "@loop/attention";
import { Mamba2Mixer } from "@loop/ssm-kernels";
import {
  add,
  type Module,
  type NamedParameter,
  parameter,
  prefixed,
  type Rng,
  rmsnorm,
  type SequenceMixer,
  type Tensor,
  weightLookup,
} from "@loop/tensor";
import { isAttentionLayer, type ModelConfig, residualInitLayers } from "./config.js";
import { cpuBackendOps } from "./cpu-backend-ops.js";
import { layerForward } from "./looped-forward.js";
import { attentionConfig, mamba2Config } from "./mixer-configs.js";
import type { MixerFactory } from "./mixer-factory.js";

/**
 * A layer's decoding state: its mixer's own (a `Mamba2State`, a `KvCache`, or a custom mixer's),
 * opaque to everything but that mixer.
 */
export type LayerState = unknown;

function ones(n: number, name: string): Tensor {
  return parameter(new Float32Array(n).fill(1), [n], name);
}

/** Layer `index` of a model: norm, mixer (the config's or a factory's), optional MLP. */
export class Layer implements Module {
  /** `norm.weight` `[D]`: the RMSNorm before the mixer. */
  readonly norm: Tensor;
  /** The sequence mixer: the config's Mamba-2 or attention mixer, or a `ModelOptions.mixer` factory's. */
  readonly mixer: SequenceMixer<LayerState>;
  /** `mlp_norm.weight` `[D]`: the RMSNorm before the MLP; null without an MLP. */
  readonly mlpNorm: Tensor | null;
  /** The SwiGLU MLP when the config has `mlp`, else null. */
  readonly mlp: SwiGluMlp | null;
  private readonly eps: number;
  private readonly fromFactory: boolean;

  constructor(
    private readonly cfg: ModelConfig,
    index: number,
    rng: Rng,
    mixerFactory: MixerFactory | null = null,
  ) {
    const D = cfg.d_model;
    this.eps = cfg.norm_eps;
    this.norm = ones(D, "norm.weight");
    const nLayers = residualInitLayers(cfg);
    const opts = { rng: rng.child("mixer"), nLayers };
    const custom = mixerFactory?.({ config: cfg, index, rng: opts.rng, nLayers }) ?? null;
    this.fromFactory = custom !== null;
    if (custom) this.mixer = custom;
    else if (isAttentionLayer(cfg, index))
      this.mixer = new AttentionMixer(attentionConfig(cfg), opts);
    else this.mixer = new Mamba2Mixer(mamba2Config(cfg), opts);
    if (cfg.mlp) {
      this.mlpNorm = ones(D, "mlp_norm.weight");
      this.mlp = new SwiGluMlp(
        { dModel: D, dFf: cfg.mlp.d_ff },
        { rng: rng.child("mlp"), nLayers },
      );
    } else {
      this.mlpNorm = null;
      this.mlp = null;
    }
  }

  /** Its parameters with docs/model.md §6 names relative to the layer (`norm.weight`, `mixer.*`, `mlp_norm.weight`, `mlp.*`); the norms are not weight-decayed. */
  parameters(): NamedParameter[] {
    const ps: NamedParameter[] = [{ name: "norm.weight", tensor: this.norm, decay: false }];
    ps.push(...prefixed("mixer", this.mixer.parameters()));
    if (this.mlp && this.mlpNorm) {
      ps.push({ name: "mlp_norm.weight", tensor: this.mlpNorm, decay: false });
      ps.push(...prefixed("mlp", this.mlp.parameters()));
    }
    return ps;
  }

  /**
   * h [B,T,D] → h [B,T,D] (looped-forward.ts on the CPU ops, the mixer's own `forward`).
   * `seqIdx`: packed documents ([B·T] document index per position).
   */
  forward(h: Tensor, seqIdx: Int32Array | null = null): Tensor {
    return layerForward(cpuBackendOps, this.cfg, this.weight, h, (u) =>
      this.mixer.forward(u, seqIdx),
    );
  }

  /**
   * Whether the mixer is not the config's built-in one: a `MixerFactory` built it, or it is of
   * another class. A device forward, which runs the built-in mixers by name, cannot run it.
   */
  get customMixer(): boolean {
    const c = this.mixer.constructor;
    return this.fromFactory || (c !== Mamba2Mixer && c !== AttentionMixer);
  }

  /** The parameter named `name` (docs/model.md §6, relative to the layer). */
  readonly weight = weightLookup(this, "Layer");

  /** A fresh decode state for `batch` sequences of up to `capacity` positions: the mixer's own state. */
  initState(batch: number, capacity: number): LayerState {
    return this.mixer.initState(batch, capacity);
  }

  /** One token: h [B,D] → h [B,D], advancing this layer's decode state. */
  step(st: LayerState, h: Tensor): Tensor {
    // norm, mixer and residual add in one call where the mixer fuses them (Mamba-2, native)
    if (this.mixer.stepResidual)
      return this.mlpSublayer(this.mixer.stepResidual(st, h, this.norm, this.eps));
    return this.residual(h, this.mixer.step(st, rmsnorm(h, this.norm, this.eps)));
  }

  /**
   * The next T tokens of every sequence at once: h [B,T,D] → [B,T,D], advancing this layer's
   * decode state as T `step` calls would (SequenceMixer.prefill: Mamba-2 through the chunked scan
   * from the carried state, attention by appending the T keys/values to the cache).
   */
  prefill(st: LayerState, h: Tensor): Tensor {
    return this.residual(h, this.mixer.prefill(st, rmsnorm(h, this.norm, this.eps)));
  }

  /** h + y, then the MLP sub-layer when there is one (the rest of the layer after its mixer). */
  private residual(h: Tensor, y: Tensor): Tensor {
    return this.mlpSublayer(add(h, y));
  }

  /** h + mlp(rmsnorm(h)) when the layer has an MLP, else h. */
  private mlpSublayer(h: Tensor): Tensor {
    if (this.mlp && this.mlpNorm)
      return add(h, this.mlp.forward(rmsnorm(h, this.mlpNorm, this.eps)));
    return h;
  }

  /**
   * A step that batch rows `rows` skip (early-exit decoding): the mixer takes their token into
   * its state from h [rows.length, D] without producing output (SequenceMixer.absorb; a KV cache's
   * length is not advanced).
   */
  absorb(st: LayerState, h: Tensor, rows: readonly number[]): void {
    this.mixer.absorb(st, rmsnorm(h, this.norm, this.eps), rows);
  }

  /**
   * One token for the batch rows `rows` (ascending) of a state of `batch` rows: h [rows.length,
   * D] → [rows.length, D]. With every row active this is exactly `step`; for a strict subset the
   * mixer steps those rows alone (SequenceMixer.withRows) and a positional state is not moved on
   * (`endPosition`, once every row has its entry).
   */
  stepRows(st: LayerState, h: Tensor, rows: readonly number[], batch: number): Tensor {
    if (rows.length === batch) return this.step(st, h);
    return this.mixer.withRows(st, rows, (sub) => this.step(sub, h));
  }
}
