/*
 * SwiGLU MLP of docs/model.md §5: x [..., D] → down_proj(silu(gate_proj(x)) ⊙ up_proj(x)) [..., D].
 * gate_proj, up_proj [dFf, D]; down_proj [D, dFf]; no biases. Initialisation: uniform
 * ±1/sqrt(fan_in); down_proj additionally divided by sqrt(nLayers) (residual scaling).
 */
import {
  cpuTensorOps,
  type Module,
  type NamedParameter,
  Rng,
  shapeStr,
  type Tensor,
  weightLookup,
} from "@loop/tensor";
import { swigluMix } from "./attention-mix.js";
import { cpuAttentionOps } from "./cpu-attention-ops.js";
import { type ModuleInit, positiveInt, residualScale, uniformWeight } from "./init.js";

/** Sizes of a SwiGLU MLP: model width and hidden width d_ff. */
export interface SwiGluConfig {
  dModel: number;
  dFf: number;
}

/** The CPU ops the differentiable forward (attention-mix.ts) runs on. */
const CPU_OPS = { ...cpuTensorOps, ...cpuAttentionOps };

/**
 * The SwiGLU MLP of a Transformer layer: down(silu(gate(x)) ⊙ up(x)), weights [dFf,dModel] and
 * [dModel,dFf].
 */
export class SwiGluMlp implements Module {
  /** The configuration it was built with (frozen copy). */
  readonly cfg: Readonly<SwiGluConfig>;
  /** `gate_proj.weight` [dFf, dModel]. */
  readonly gateProj: Tensor;
  /** `up_proj.weight` [dFf, dModel]. */
  readonly upProj: Tensor;
  /** `down_proj.weight` [dModel, dFf]; its init is scaled down with the layer count. */
  readonly downProj: Tensor;

  constructor(cfg: SwiGluConfig, opts: ModuleInit = {}) {
    positiveInt(cfg.dModel, "SwiGluMlp: dModel");
    positiveInt(cfg.dFf, "SwiGluMlp: dFf");
    this.cfg = Object.freeze({ ...cfg });
    const { dModel: D, dFf: F } = cfg;
    const rng = opts.rng ?? new Rng(0);
    this.gateProj = uniformWeight(rng, "gate_proj.weight", F, D, 1 / Math.sqrt(D));
    this.upProj = uniformWeight(rng, "up_proj.weight", F, D, 1 / Math.sqrt(D));
    const downBound = (1 / Math.sqrt(F)) * residualScale(opts.nLayers);
    this.downProj = uniformWeight(rng, "down_proj.weight", D, F, downBound);
  }

  /** The weight named `name` (docs/model.md §6, relative to the MLP), for attention-mix.ts. */
  readonly weight = weightLookup(this, "SwiGluMlp");

  /** The three projection weights with their docs/model.md §6 names (relative to the MLP), all weight-decayed. */
  parameters(): NamedParameter[] {
    return [
      { name: "gate_proj.weight", tensor: this.gateProj, decay: true },
      { name: "up_proj.weight", tensor: this.upProj, decay: true },
      { name: "down_proj.weight", tensor: this.downProj, decay: true },
    ];
  }

  /** x [..., D] → [..., D]. */
  forward(x: Tensor): Tensor {
    if (x.rank < 1 || x.lastDim !== this.cfg.dModel) {
      throw new Error(
        `SwiGluMlp.forward: x must be [..., ${this.cfg.dModel}], got ${shapeStr(x.shape)}`,
      );
    }
    return swigluMix(CPU_OPS, this.weight, x);
  }
}
