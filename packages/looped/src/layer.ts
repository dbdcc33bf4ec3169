/**
 * One pre-norm residual layer (docs/model.md §2): x ← x + mixer(rmsnorm(x)); a transformer layer then
 * also x ← x + mlp(rmsnorm(x)). The mixer is Mamba-2 (§3) or attention (§4).
 */
import { AttentionMixer, type KvCache, SwiGluMlp } from "@loop/attention";
import { Mamba2Mixer, type Mamba2State } from "@loop/ssm-kernels";
import {
  add,
  type Module,
  type NamedParameter,
  parameter,
  prefixed,
  type Rng,
  rmsnorm,
  type Tensor,
} from "@loop/tensor";
import { isAttentionLayer, type ModelConfig, residualInitLayers } from "./config.js";
import { attentionConfig, mamba2Config } from "./mixer-configs.js";

export type LayerState =
  | { kind: "mamba"; state: Mamba2State }
  | { kind: "attention"; cache: KvCache };

function ones(n: number, name: string): Tensor {
  return parameter(new Float32Array(n).fill(1), [n], name);
}

export class Layer implements Module {
  readonly norm: Tensor;
  readonly mixer: Mamba2Mixer | AttentionMixer;
  readonly mlpNorm: Tensor | null;
  readonly mlp: SwiGluMlp | null;
  private readonly eps: number;

  constructor(cfg: ModelConfig, index: number, rng: Rng) {
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

  /** h [B,T,D] → h [B,T,D]. */
  /** `seqIdx`: packed documents ([B·T] document index per position; Mamba2Mixer.forward). */
  forward(h: Tensor, seqIdx: Int32Array | null = null): Tensor {
    const u = rmsnorm(h, this.norm, this.eps);
    return this.residual(
      h,
      this.mixer instanceof AttentionMixer
        ? this.mixer.forward(u, 0, seqIdx)
        : this.mixer.forward(u, seqIdx),
    );
  }

  initState(batch: number, capacity: number): LayerState {
    if (this.mixer instanceof AttentionMixer)
      return { kind: "attention", cache: this.mixer.initCache(batch, capacity) };
    return { kind: "mamba", state: this.mixer.initState(batch) };
  }

  /** One token: h [B,D] → h [B,D], advancing this layer's decode state. */
  step(st: LayerState, h: Tensor): Tensor {
    if (st.kind === "mamba") {
      // norm, mixer and residual add in one call where the native kernel is registered
      const mixed = (this.mixer as Mamba2Mixer).stepResidual(st.state, h, this.norm, this.eps);
      return this.mlpSublayer(mixed);
    }
    const u = rmsnorm(h, this.norm, this.eps);
    return this.residual(h, (this.mixer as AttentionMixer).step(st.cache, u));
  }

  /**
   * The next T tokens of every sequence at once: h [B,T,D] → [B,T,D], advancing this layer's
   * decode state as T `step` calls would — Mamba-2 through the chunked scan from the carried
   * conv/SSM state (Mamba2Mixer.prefill, state copied back in place), attention by appending the
   * T keys/values to the cache and attending causally (AttentionMixer.extend).
   */
  prefill(st: LayerState, h: Tensor): Tensor {
    const u = rmsnorm(h, this.norm, this.eps);
    let y: Tensor;
    if (st.kind === "attention") y = (this.mixer as AttentionMixer).extend(st.cache, u);
    else {
      const r = (this.mixer as Mamba2Mixer).prefill(u, st.state);
      st.state.conv.set(r.state.conv);
      st.state.ssm.set(r.state.ssm);
      y = r.y;
    }
    return this.residual(h, y);
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
   * its state from h [rows.length, D] without producing output (Mamba2Mixer.absorb,
   * AttentionMixer.absorb, which does not advance the cache's length).
   */
  absorb(st: LayerState, h: Tensor, rows: readonly number[]): void {
    const u = rmsnorm(h, this.norm, this.eps);
    if (st.kind === "attention") (this.mixer as AttentionMixer).absorb(st.cache, u, rows);
    else (this.mixer as Mamba2Mixer).absorb(st.state, u, rows);
  }
}
