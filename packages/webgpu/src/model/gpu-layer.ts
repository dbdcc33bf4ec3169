/**
 * One pre-norm residual layer (docs/model.md §2) on the device, as `Layer.forward`
 * (@loop/looped): x ← x + mixer(rmsnorm(x)); with an MLP also x ← x + mlp(rmsnorm(x)).
 */
import { isAttentionLayer, type ModelConfig } from "@loop/looped";
import type { GpuTensor } from "../gpu-tensor.js";
import { add } from "../ops/elementwise.js";
import { rmsnorm } from "../ops/rmsnorm.js";
import { GpuAttentionMixer } from "./gpu-attention-mixer.js";
import { GpuMamba2Mixer } from "./gpu-mamba2-mixer.js";
import type { GpuParameters } from "./gpu-parameters.js";
import { GpuSwiGluMlp } from "./gpu-swiglu-mlp.js";

export class GpuLayer {
  private readonly norm: GpuTensor;
  private readonly mixer: GpuMamba2Mixer | GpuAttentionMixer;
  private readonly mlpNorm: GpuTensor | null;
  private readonly mlp: GpuSwiGluMlp | null;
  private readonly eps: number;

  constructor(cfg: ModelConfig, index: number, params: GpuParameters) {
    const prefix = `backbone.layers.${index}.`;
    this.eps = cfg.norm_eps;
    this.norm = params.get(`${prefix}norm.weight`);
    this.mixer = isAttentionLayer(cfg, index)
      ? new GpuAttentionMixer(cfg, params, `${prefix}mixer.`)
      : new GpuMamba2Mixer(cfg, params, `${prefix}mixer.`);
    if (cfg.mlp) {
      this.mlpNorm = params.get(`${prefix}mlp_norm.weight`);
      this.mlp = new GpuSwiGluMlp(params, `${prefix}mlp.`);
    } else {
      this.mlpNorm = null;
      this.mlp = null;
    }
  }

  /** h [B,T,D] → h [B,T,D]. */
  forward(h: GpuTensor, seqIdx: GpuTensor | null): GpuTensor {
    h = add(h, this.mixer.forward(rmsnorm(h, this.norm, this.eps), seqIdx));
    if (this.mlp && this.mlpNorm) h = add(h, this.mlp.forward(rmsnorm(h, this.mlpNorm, this.eps)));
    return h;
  }
}
