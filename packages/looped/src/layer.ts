/*
 * One pre-norm residual layer (docs/model.md §2): x ← x + mixer(rmsnorm(x)); a transformer layer then
 * also x ← x + mlp(rmsnorm(x)). The mixer is Mamba-2 (§3) or attention (§4).
 */
import { AttentionMixer, type KvCache, SwiGluMlp } from "@loop/attention";
import { Mamba2Mixer, type Mamba2State } from "@loop/ssm-kernels";
import {
  add,
  IntTensor,
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

/** A layer's decoding state: its mixer's own (a Mamba-2 state or a KV cache). */
export type LayerState = Mamba2State | KvCache;

function ones(n: number, name: string): Tensor {
  return parameter(new Float32Array(n).fill(1), [n], name);
}

/**
 * One pre-norm residual layer, x ← x + mixer(rmsnorm(x)) (then an MLP sub-layer when the config has
 * one), around a `SequenceMixer` (Mamba-2 or attention).
 */
export class Layer implements Module {
  readonly norm: Tensor;
  readonly mixer: SequenceMixer<LayerState>;
  readonly mlpNorm: Tensor | null;
  readonly mlp: SwiGluMlp | null;
  private readonly eps: number;

  constructor(
    private readonly cfg: ModelConfig,
    private readonly index: number,
    rng: Rng,
  ) {
    const D = cfg.d_model;
    this.eps = cfg.norm_eps;
    this.norm = ones(D, "norm.weight");
    const nLayers = residualInitLayers(cfg);
    const opts = { rng: rng.child("mixer"), nLayers };
    if (isAttentionLayer(cfg, index)) {
      this.mixer = new AttentionMixer(attentionConfig(cfg), opts);
    } else {
      this.mixer = new Mamba2Mixer(mamba2Config(cfg), opts);
    }
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
   * h [B,T,D] → h [B,T,D] (looped-forward.ts on the CPU ops). `seqIdx`: packed documents ([B·T]
   * document index per position; Mamba2Mixer.forward).
   */
  forward(h: Tensor, seqIdx: Int32Array | null = null): Tensor {
    const seq = seqIdx ? new IntTensor(seqIdx, [seqIdx.length]) : null;
    return layerForward(cpuBackendOps, this.cfg, this.index, this.weight, h, seq);
  }

  /** The parameter named `name` (docs/model.md §6, relative to the layer). */
  readonly weight = weightLookup(this, "Layer");

  initState(batch: number, capacity: number): LayerState {
    return this.mixer.createState(batch, capacity);
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
   * decode state as T `step` calls would (SequenceMixer.extend: Mamba-2 through the chunked scan
   * from the carried state, attention by appending the T keys/values to the cache).
   */
  prefill(st: LayerState, h: Tensor): Tensor {
    return this.residual(h, this.mixer.extend(st, rmsnorm(h, this.norm, this.eps)));
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
