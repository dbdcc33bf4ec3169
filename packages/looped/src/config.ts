/*
 * The model config of docs/formats.md ("config.json"), snake_case exactly as on disk, with a default
 * for every optional key and validation that names the key and the allowed values.
 */
import { pythonJson } from "./python-json.js";

/** The backbone of a model: Mamba-2 layers, Mamba-2 with attention layers, or attention only. */
export type Backbone = "mamba" | "hybrid" | "transformer";
/** The backbone names a config accepts. */
export const BACKBONES: readonly Backbone[] = ["mamba", "hybrid", "transformer"];

/**
 * Mamba-2 sizes of a config (`ssm`): state size, head size, expansion, groups, conv width, scan
 * chunk.
 */
export interface SsmSettings {
  d_state: number;
  headdim: number;
  expand: number;
  n_groups: number;
  d_conv: number;
  chunk_size: number;
  /**
   * dt clamped to [lo, hi] after its softplus (Hugging Face's and mamba_ssm's
   * `time_step_limit`). Absent means [0, ∞), no clamp; the default is kept implicit, so a config
   * that does not set it has no such key; `Infinity` is written bare, as Python's json module
   * does.
   */
  time_step_limit?: [number, number];
  /**
   * What the gated norm takes its RMS over (docs/formats.md): absent means "per_group", per
   * B/C group of d_inner/n_groups channels (mamba_ssm, transformers' CUDA path); "whole" means
   * over all of d_inner (transformers' PyTorch path). The same with n_groups = 1.
   */
  norm_groups?: "whole";
}

/** The gated norm's groupings (SsmSettings.norm_groups). */
export type NormGroups = "per_group" | "whole";
/** Every value of NormGroups. */
export const NORM_GROUPS: readonly NormGroups[] = ["per_group", "whole"];

/** Attention sizes of a config (`attention`): query heads, key/value heads, RoPE base. */
export interface AttentionSettings {
  n_heads: number;
  n_kv_heads: number;
  rope_theta: number;
}

/** MLP size of a config (`mlp`): the SwiGLU hidden width. */
export interface MlpSettings {
  d_ff: number;
}

/**
 * Initial scale of every residual output projection (Mamba-2 out_proj, attention o_proj, MLP
 * down projection), on top of ±1/√fan_in: "layers" divides by √n_layers (the distinct layers);
 * "depth" by √(n_layers·n_loops), the residual additions of the unrolled stack.
 */
export type OutProjScale = "layers" | "depth";
/** The `out_proj_scale` values a config accepts. */
export const OUT_PROJ_SCALES: readonly OutProjScale[] = ["layers", "depth"];

/**
 * A model configuration (`config.json`, docs/formats.md): backbone, sizes, N layers, R loops and
 * every option, all defaults filled in.
 */
export interface ModelConfig {
  backbone: Backbone;
  vocab_size: number;
  d_model: number;
  n_layers: number;
  n_loops: number;
  loop_norm: boolean;
  norm_eps: number;
  tie_embeddings: boolean;
  ssm: SsmSettings;
  attention: AttentionSettings;
  attn_layers: number[];
  mlp: MlpSettings | null;
  exit_gate: boolean;
  /**
   * Initialisation only (docs/formats.md): absent means "layers", and "layers" is never written,
   * so a config that does not use the option has no such key.
   */
  out_proj_scale?: "depth";
  /**
   * The custom mixer the layers run (`ModelOptions.mixer`), by its class's name; absent for the
   * built-in mixers. A model built with a factory records it, so config.json names the mixer a
   * load needs; with it, `ssm` and `attention` are checked only where a built-in mixer is built.
   */
  mixer?: string;
}

/** A config as a user may write it: everything but the required keys optional. */
export type ModelConfigInput = Pick<
  ModelConfig,
  "backbone" | "vocab_size" | "d_model" | "n_layers"
> &
  Partial<Omit<ModelConfig, "ssm" | "attention" | "out_proj_scale">> & {
    out_proj_scale?: OutProjScale;
    ssm?: Partial<Omit<SsmSettings, "norm_groups">> & { norm_groups?: NormGroups };
    attention?: Partial<AttentionSettings>;
  };

/** The default Mamba-2 sizes (`ssm`) of a config. */
export const DEFAULT_SSM: SsmSettings = {
  d_state: 16,
  headdim: 16,
  expand: 2,
  n_groups: 1,
  d_conv: 4,
  chunk_size: 64,
};
/** The default attention sizes (`attention`) of a config. */
export const DEFAULT_ATTENTION: AttentionSettings = {
  n_heads: 4,
  n_kv_heads: 4,
  rope_theta: 10000,
};

const TOP_KEYS = [
  "backbone",
  "vocab_size",
  "d_model",
  "n_layers",
  "n_loops",
  "loop_norm",
  "norm_eps",
  "tie_embeddings",
  "ssm",
  "attention",
  "attn_layers",
  "mlp",
  "exit_gate",
  "out_proj_scale",
  "mixer",
];

function fail(msg: string): never {
  throw new Error(`config: ${msg}`);
}

/** `v` as a message shows it: JSON, but a non-finite number by name (JSON.stringify says null). */
function shown(v: unknown): string {
  return typeof v === "number" ? String(v) : JSON.stringify(v);
}

/**
 * The largest size any one config key may take: 2^24 (16,777,216). Far above any model looplm
 * can hold (a single layer of d_model 2^24 has ~10^15 parameters), it keeps every product of
 * sizes an exact integer and every per-layer or per-loop step of building or estimating a model
 * short: an edited `n_layers: 1e300` or `n_loops: 1e9` is refused at once instead of growing
 * memory for ever before the first allocation fails.
 */
export const MAX_CONFIG_SIZE = 2 ** 24;

/**
 * The most loop steps a config may ask for: 2^16. Every token runs through every one of them
 * (generation keeps a decode state per step), so a config looping ten million times fits in
 * memory yet generates nothing for hours; looped models use a handful.
 */
export const MAX_LOOPS = 2 ** 16;

function posInt(v: unknown, key: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1)
    fail(`${key} must be a positive integer, got ${shown(v)}`);
  if (v > MAX_CONFIG_SIZE)
    fail(`${key} ${shown(v)} is more than any model holds (at most ${MAX_CONFIG_SIZE}); lower it`);
  return v;
}

function loops(v: unknown): number {
  const n = posInt(v, "n_loops");
  if (n > MAX_LOOPS)
    fail(
      `n_loops ${n} is more loop steps than any model runs (at most ${MAX_LOOPS}: every token runs through each); lower it`,
    );
  return n;
}

function bool(v: unknown, key: string): boolean {
  if (typeof v !== "boolean") fail(`${key} must be true or false, got ${shown(v)}`);
  return v;
}

function posNum(v: unknown, key: string): number {
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0)
    fail(`${key} must be a positive number, got ${shown(v)}`);
  return v;
}

/**
 * [lo, hi] with 0 ≤ lo ≤ hi (hi may be Infinity, or null: JSON.stringify's spelling of it, in
 * run.json and queue jobs); null for the default [0, ∞).
 */
function dtLimit(raw: unknown, key: string): [number, number] | null {
  const v =
    Array.isArray(raw) && raw.length === 2 && raw[1] === null
      ? [raw[0], Number.POSITIVE_INFINITY]
      : raw;
  const ok =
    Array.isArray(v) &&
    v.length === 2 &&
    v.every((x) => typeof x === "number" && !Number.isNaN(x)) &&
    v[0] >= 0 &&
    Number.isFinite(v[0]) &&
    v[0] <= v[1];
  if (!ok)
    fail(
      `${key} must be [lo, hi] with 0 ≤ lo ≤ hi (hi may be Infinity), got ${Array.isArray(raw) ? `[${raw.join(", ")}]` : JSON.stringify(raw)}`,
    );
  const [lo, hi] = v as [number, number];
  return lo === 0 && hi === Number.POSITIVE_INFINITY ? null : [lo, hi];
}

function obj(v: unknown, key: string): Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v))
    fail(`${key} must be an object, got ${JSON.stringify(v)}`);
  return v as Record<string, unknown>;
}

function checkKeys(o: Record<string, unknown>, allowed: readonly string[], where: string): void {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) fail(`unknown key "${where}${k}" (allowed: ${allowed.join(", ")})`);
  }
}

/** Parse and validate a config object (e.g. JSON.parse of config.json), filling defaults. */
export function parseConfig(raw: unknown): ModelConfig {
  const o = obj(raw, "config");
  checkKeys(o, TOP_KEYS, "");
  if (!BACKBONES.includes(o.backbone as Backbone)) {
    fail(
      `backbone must be one of ${BACKBONES.map((b) => `"${b}"`).join(", ")}, got ${JSON.stringify(o.backbone)}`,
    );
  }
  const backbone = o.backbone as Backbone;
  const ssmRaw = o.ssm === undefined ? {} : obj(o.ssm, "ssm");
  checkKeys(ssmRaw, [...Object.keys(DEFAULT_SSM), "time_step_limit", "norm_groups"], "ssm.");
  const ssmIn = { ...DEFAULT_SSM, ...ssmRaw };
  const ssm: SsmSettings = {
    d_state: posInt(ssmIn.d_state, "ssm.d_state"),
    headdim: posInt(ssmIn.headdim, "ssm.headdim"),
    expand: posInt(ssmIn.expand, "ssm.expand"),
    n_groups: posInt(ssmIn.n_groups, "ssm.n_groups"),
    d_conv: posInt(ssmIn.d_conv, "ssm.d_conv"),
    chunk_size: posInt(ssmIn.chunk_size, "ssm.chunk_size"),
  };
  // the defaults are kept implicit (see SsmSettings)
  if (ssmRaw.time_step_limit !== undefined) {
    const lim = dtLimit(ssmRaw.time_step_limit, "ssm.time_step_limit");
    if (lim) ssm.time_step_limit = lim;
  }
  if (ssmRaw.norm_groups !== undefined) {
    if (!NORM_GROUPS.includes(ssmRaw.norm_groups as NormGroups))
      fail(
        `ssm.norm_groups must be one of ${NORM_GROUPS.map((s) => `"${s}"`).join(", ")}, got ${JSON.stringify(ssmRaw.norm_groups)}`,
      );
    if (ssmRaw.norm_groups === "whole") ssm.norm_groups = "whole";
  }
  const attRaw = o.attention === undefined ? {} : obj(o.attention, "attention");
  checkKeys(attRaw, Object.keys(DEFAULT_ATTENTION), "attention.");
  const attIn = { ...DEFAULT_ATTENTION, ...attRaw };
  const attention: AttentionSettings = {
    n_heads: posInt(attIn.n_heads, "attention.n_heads"),
    n_kv_heads: posInt(attIn.n_kv_heads, "attention.n_kv_heads"),
    rope_theta: posNum(attIn.rope_theta, "attention.rope_theta"),
  };
  const cfg: ModelConfig = {
    backbone,
    vocab_size: posInt(o.vocab_size, "vocab_size"),
    d_model: posInt(o.d_model, "d_model"),
    n_layers: posInt(o.n_layers, "n_layers"),
    n_loops: o.n_loops === undefined ? 1 : loops(o.n_loops),
    loop_norm: o.loop_norm === undefined ? false : bool(o.loop_norm, "loop_norm"),
    norm_eps: o.norm_eps === undefined ? 1e-5 : posNum(o.norm_eps, "norm_eps"),
    tie_embeddings:
      o.tie_embeddings === undefined ? true : bool(o.tie_embeddings, "tie_embeddings"),
    ssm,
    attention,
    attn_layers: [],
    mlp: null,
    exit_gate: o.exit_gate === undefined ? false : bool(o.exit_gate, "exit_gate"),
  };
  if (o.out_proj_scale !== undefined) {
    if (!OUT_PROJ_SCALES.includes(o.out_proj_scale as OutProjScale))
      fail(
        `out_proj_scale must be one of ${OUT_PROJ_SCALES.map((s) => `"${s}"`).join(", ")}, got ${JSON.stringify(o.out_proj_scale)}`,
      );
    // the default is kept implicit (see ModelConfig.out_proj_scale)
    if (o.out_proj_scale === "depth") cfg.out_proj_scale = "depth";
  }
  if (o.attn_layers !== undefined) {
    if (!Array.isArray(o.attn_layers))
      fail(`attn_layers must be an array of layer indices, got ${JSON.stringify(o.attn_layers)}`);
    cfg.attn_layers = o.attn_layers.map((v, i) => {
      if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v >= cfg.n_layers) {
        fail(
          `attn_layers[${i}] must be a layer index in 0..${cfg.n_layers - 1}, got ${JSON.stringify(v)}`,
        );
      }
      return v;
    });
    if (new Set(cfg.attn_layers).size !== cfg.attn_layers.length)
      fail(`attn_layers has duplicates: ${JSON.stringify(o.attn_layers)}`);
  }
  if (o.mixer !== undefined) {
    if (typeof o.mixer !== "string" || o.mixer.trim() === "")
      fail(`mixer must name the custom mixer (a non-empty string), got ${JSON.stringify(o.mixer)}`);
    cfg.mixer = o.mixer;
  }
  if (o.mlp !== undefined && o.mlp !== null) {
    const m = obj(o.mlp, "mlp");
    checkKeys(m, ["d_ff"], "mlp.");
    cfg.mlp = { d_ff: posInt(m.d_ff, "mlp.d_ff") };
  }
  validateConfig(cfg);
  return cfg;
}

/** Cross-key checks on a complete config. */
function validateConfig(cfg: ModelConfig): void {
  if (cfg.backbone !== "hybrid" && cfg.attn_layers.length > 0) {
    fail(
      `attn_layers is only allowed with backbone "hybrid" (backbone is "${cfg.backbone}", attn_layers ${JSON.stringify(cfg.attn_layers)})`,
    );
  }
  if (cfg.backbone === "transformer" && cfg.mlp === null)
    fail(`mlp ({"d_ff": …}) is required for backbone "transformer"`);
  if (cfg.backbone !== "transformer" && cfg.mlp !== null) {
    fail(`mlp is only allowed with backbone "transformer" (backbone is "${cfg.backbone}")`);
  }
  const usesAttention =
    cfg.backbone === "transformer" || (cfg.backbone === "hybrid" && cfg.attn_layers.length > 0);
  const usesSsm =
    cfg.backbone === "mamba" ||
    (cfg.backbone === "hybrid" && cfg.attn_layers.length < cfg.n_layers);
  // (a custom mixer replaces the built-in ones: their sizes are checked where one is built)
  if (usesAttention && cfg.mixer === undefined) {
    const { n_heads, n_kv_heads } = cfg.attention;
    if (cfg.d_model % n_heads !== 0)
      fail(`attention.n_heads (${n_heads}) must divide d_model (${cfg.d_model})`);
    if (n_heads % n_kv_heads !== 0)
      fail(`attention.n_kv_heads (${n_kv_heads}) must divide attention.n_heads (${n_heads})`);
    if ((cfg.d_model / n_heads) % 2 !== 0)
      fail(`head dim d_model/n_heads = ${cfg.d_model / n_heads} must be even for RoPE`);
  }
  if (usesSsm && cfg.mixer === undefined) {
    const di = cfg.ssm.expand * cfg.d_model;
    if (di % cfg.ssm.headdim !== 0)
      fail(`ssm.headdim (${cfg.ssm.headdim}) must divide d_inner = expand·d_model = ${di}`);
    const h = di / cfg.ssm.headdim;
    if (h % cfg.ssm.n_groups !== 0)
      fail(`ssm.n_groups (${cfg.ssm.n_groups}) must divide the head count ${h}`);
  }
}

/** Build a complete config from a partial one (defaults filled, validated). */
export function makeConfig(input: ModelConfigInput): ModelConfig {
  return parseConfig(input);
}

/**
 * The layer count residual output projections are scaled for at initialisation (÷√ of it):
 * n_layers, or n_layers·n_loops with out_proj_scale "depth".
 */
export function residualInitLayers(cfg: ModelConfig): number {
  return cfg.out_proj_scale === "depth" ? cfg.n_layers * cfg.n_loops : cfg.n_layers;
}

/** Whether layer `i` has an attention mixer. */
export function isAttentionLayer(cfg: ModelConfig, i: number): boolean {
  return (
    cfg.backbone === "transformer" || (cfg.backbone === "hybrid" && cfg.attn_layers.includes(i))
  );
}

/**
 * The on-disk JSON text (all keys, snake_case); an infinite time_step_limit is written as a bare
 * `Infinity`, as Python's json module writes it (what parseConfigText and transformers read).
 */
export function configToJson(cfg: ModelConfig): string {
  return `${pythonJson(cfg)}\n`;
}
