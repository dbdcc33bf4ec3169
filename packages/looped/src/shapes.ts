/*
 * Every parameter's name and shape for a config (docs/model.md §6), in a fixed order. The single
 * source for strict checkpoint loading and exact parameter counting.
 */
import { attentionProjDims } from "@loop/attention";
import { mamba2Dims } from "@loop/ssm-kernels";
import { isAttentionLayer, type ModelConfig } from "./config.js";
import { attentionConfig, mamba2Config } from "./mixer-configs.js";

/** A parameter's docs/model.md §6 name and shape. */
export interface ParamSpec {
  name: string;
  shape: number[];
}

/**
 * Every parameter of the model `cfg` describes, named and shaped as docs/model.md §6, in the
 * model's order; the layers in `customMixers` leave out their mixer's (a custom mixer's own
 * parameters are its business).
 */
export function parameterSpecs(
  cfg: ModelConfig,
  customMixers: ReadonlySet<number> = new Set(),
): ParamSpec[] {
  const D = cfg.d_model;
  const out: ParamSpec[] = [{ name: "backbone.embeddings.weight", shape: [cfg.vocab_size, D] }];
  for (let i = 0; i < cfg.n_layers; i++) {
    const p = `backbone.layers.${i}`;
    out.push({ name: `${p}.norm.weight`, shape: [D] });
    if (customMixers.has(i)) {
      // (its parameters are the custom mixer's own)
    } else if (isAttentionLayer(cfg, i)) {
      const a = attentionProjDims(attentionConfig(cfg));
      out.push(
        { name: `${p}.mixer.q_proj.weight`, shape: [a.qDim, D] },
        { name: `${p}.mixer.k_proj.weight`, shape: [a.kvDim, D] },
        { name: `${p}.mixer.v_proj.weight`, shape: [a.kvDim, D] },
        { name: `${p}.mixer.o_proj.weight`, shape: [D, a.qDim] },
      );
    } else {
      const s = mamba2Dims(mamba2Config(cfg));
      out.push(
        { name: `${p}.mixer.in_proj.weight`, shape: [s.inProjDim, D] },
        { name: `${p}.mixer.conv1d.weight`, shape: [s.convDim, 1, cfg.ssm.d_conv] },
        { name: `${p}.mixer.conv1d.bias`, shape: [s.convDim] },
        { name: `${p}.mixer.dt_bias`, shape: [s.nHeads] },
        { name: `${p}.mixer.A_log`, shape: [s.nHeads] },
        { name: `${p}.mixer.D`, shape: [s.nHeads] },
        { name: `${p}.mixer.norm.weight`, shape: [s.dInner] },
        { name: `${p}.mixer.out_proj.weight`, shape: [D, s.dInner] },
      );
    }
    if (cfg.mlp) {
      const f = cfg.mlp.d_ff;
      out.push(
        { name: `${p}.mlp_norm.weight`, shape: [D] },
        { name: `${p}.mlp.gate_proj.weight`, shape: [f, D] },
        { name: `${p}.mlp.up_proj.weight`, shape: [f, D] },
        { name: `${p}.mlp.down_proj.weight`, shape: [D, f] },
      );
    }
  }
  out.push({ name: "backbone.norm_f.weight", shape: [D] });
  if (!cfg.tie_embeddings) out.push({ name: "lm_head.weight", shape: [cfg.vocab_size, D] });
  if (cfg.exit_gate)
    out.push({ name: "exit_gate.weight", shape: [1, D] }, { name: "exit_gate.bias", shape: [1] });
  return out;
}

/**
 * Whether parameter `name` belongs to the looped block: the N layers, and norm_f when loop_norm
 * applies it at every step.
 */
export function isBlockParameter(cfg: Pick<ModelConfig, "loop_norm">, name: string): boolean {
  return (
    name.startsWith("backbone.layers.") || (cfg.loop_norm && name === "backbone.norm_f.weight")
  );
}
