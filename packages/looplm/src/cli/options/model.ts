/* Model flags (or a config.json file) → a validated model config for a task's vocabulary. */
import {
  BACKBONES,
  type Backbone,
  fromHfMamba2Config,
  isHfMamba2Config,
  type ModelConfig,
  OUT_PROJ_SCALES,
  type OutProjScale,
  parseConfig,
} from "@loop/looped";
import { readModelJson } from "@loop/looped/node";
import type { Command } from "commander";
import { asCliError, CliError, choiceOption, intFlag } from "../errors.js";

/** The model flags' defaults (what `--help` shows), for callers that build configs in code. */
export const MODEL_DEFAULTS = {
  backbone: "mamba" as Backbone,
  dModel: 64,
  layers: 1,
  loops: 1,
  dState: 16,
  headdim: 16,
  expand: 2,
  groups: 1,
  dConv: 4,
  chunk: 64,
  heads: 4,
  loopNorm: false,
  outProjScale: "layers" as OutProjScale,
  untied: false,
  exitGate: false,
};

/** The model flags: those with a default, and those without. */
export type ModelFlags = typeof MODEL_DEFAULTS & {
  config?: string;
  kvHeads?: number;
  attnLayers?: string;
  dFf?: number;
};

const outProjScale = choiceOption<OutProjScale>("--out-proj-scale", OUT_PROJ_SCALES);
const backbone = choiceOption<Backbone>("--backbone", BACKBONES);

/** Model flags; `depth: false` leaves out --layers/--loops (a sweep sets them). */
export function addModelOptions(cmd: Command, depth = true): Command {
  cmd.option(
    "--config <file>",
    "model config.json (docs/formats.md); overrides the model flags below",
  );
  if (depth) {
    cmd
      .addOption(
        intFlag("--layers <N>", "distinct layers in the looped block", 1, MODEL_DEFAULTS.layers),
      )
      .addOption(intFlag("--loops <R>", "loop steps", 1, MODEL_DEFAULTS.loops));
  }
  return cmd
    .option(
      "--backbone <kind>",
      `backbone: ${BACKBONES.join(" | ")}`,
      backbone,
      MODEL_DEFAULTS.backbone,
    )
    .addOption(intFlag("--d-model <D>", "model width", 1, MODEL_DEFAULTS.dModel))
    .addOption(intFlag("--d-state <Ns>", "SSM state size", 1, MODEL_DEFAULTS.dState))
    .addOption(intFlag("--headdim <P>", "SSM head dimension", 1, MODEL_DEFAULTS.headdim))
    .addOption(intFlag("--expand <e>", "SSM expansion (d_inner = e·D)", 1, MODEL_DEFAULTS.expand))
    .addOption(intFlag("--groups <G>", "SSM B/C groups", 1, MODEL_DEFAULTS.groups))
    .addOption(intFlag("--d-conv <K>", "SSM conv width", 1, MODEL_DEFAULTS.dConv))
    .addOption(intFlag("--chunk <n>", "SSD chunk size", 1, MODEL_DEFAULTS.chunk))
    .addOption(intFlag("--heads <Hq>", "attention heads", 1, MODEL_DEFAULTS.heads))
    .addOption(intFlag("--kv-heads <Hkv>", "attention KV heads (default: --heads)", 1))
    .option("--attn-layers <list>", "hybrid: comma-separated 0-based attention layer indices")
    .addOption(intFlag("--d-ff <n>", "transformer: MLP width (default 8/3·D rounded to 8)", 1))
    .option("--loop-norm", "apply norm_f to the state handed to the next loop", false)
    .option(
      "--out-proj-scale <s>",
      "initial scale of the residual output projections: layers (÷√N) | depth (÷√(N·R))",
      outProjScale,
      MODEL_DEFAULTS.outProjScale,
    )
    .option("--untied", "separate LM head (default: tied to the embedding)", false)
    .option("--exit-gate", "add an exit gate", false);
}

export function parseIntList(flag: string, v: string): number[] {
  const parts = v.split(",").map((s) => s.trim());
  const bad = parts.findIndex((p) => !/^\d+$/.test(p) || !Number.isSafeInteger(Number(p)));
  if (bad >= 0)
    throw new CliError(
      `${flag}: item ${bad + 1} of "${v.length > 80 ? `${v.slice(0, 80)}…` : v}" is ${parts[bad] === "" ? "empty" : `"${parts[bad]!.slice(0, 40)}"`}, not a whole number ≥ 0; give comma-separated whole numbers such as 0,1,2`,
    );
  return parts.map(Number);
}

export function buildModelConfig(f: ModelFlags, vocabSize: number): ModelConfig {
  return asCliError(() => {
    if (f.config) {
      let raw: unknown;
      try {
        raw = readModelJson(f.config);
      } catch (e) {
        throw new Error(`--config: ${(e as Error).message}`);
      }
      // a Hugging Face Mamba-2 config.json (as transformers writes it) describes a 1-loop model
      const cfg = isHfMamba2Config(raw)
        ? fromHfMamba2Config(raw as Record<string, unknown>, {
            onNote: (line) => process.stderr.write(`looplm: --config ${f.config}: ${line}\n`),
          })
        : parseConfig(raw);
      if (cfg.vocab_size < vocabSize)
        throw new Error(
          `--config vocab_size ${cfg.vocab_size} is smaller than the task's ${vocabSize} symbols`,
        );
      return cfg;
    }
    const dFf = f.dFf ?? Math.max(8, Math.round(((8 / 3) * f.dModel) / 8) * 8);
    return parseConfig({
      backbone: f.backbone,
      vocab_size: vocabSize,
      d_model: f.dModel,
      n_layers: f.layers,
      n_loops: f.loops,
      loop_norm: f.loopNorm,
      // (absent from older flag records: the default)
      out_proj_scale: f.outProjScale ?? "layers",
      tie_embeddings: !f.untied,
      ssm: {
        d_state: f.dState,
        headdim: f.headdim,
        expand: f.expand,
        n_groups: f.groups,
        d_conv: f.dConv,
        chunk_size: f.chunk,
      },
      attention: { n_heads: f.heads, n_kv_heads: f.kvHeads ?? f.heads, rope_theta: 10000 },
      attn_layers: f.attnLayers ? parseIntList("--attn-layers", f.attnLayers) : [],
      mlp: f.backbone === "transformer" ? { d_ff: dFf } : null,
      exit_gate: f.exitGate,
    });
  });
}
