/**
 * Mamba-2 mixer sizes (docs/model.md §3): Di = expand·D, H = Di / headdim, conv channels
 * C = Di + 2·G·Ns, in_proj rows 2·Di + 2·G·Ns + H. Validates the config.
 */
export interface Mamba2Config {
  dModel: number;
  dState: number;
  headdim: number;
  expand: number;
  nGroups: number;
  dConv: number;
  chunkSize: number;
  normEps: number;
  /**
   * dt clamped to [lo, hi] right after its softplus (Hugging Face / mamba_ssm `time_step_limit`);
   * absent: [0, ∞), which changes nothing (a softplus is never negative).
   */
  dtLimit?: readonly [number, number];
  /**
   * How many groups of channels the gated norm takes its RMS over: absent means nGroups (per
   * B/C group of Di/G channels, as mamba_ssm and transformers' CUDA kernels); 1 means over all
   * of Di (transformers' PyTorch path). Must divide Di.
   */
  normGroups?: number;
}

/** Derived Mamba-2 sizes: inner width, heads, conv channels and in_proj output width. */
export interface Mamba2Dims {
  dInner: number;
  nHeads: number;
  convDim: number;
  inProjDim: number;
}

function positiveInt(name: string, v: number): void {
  if (!Number.isInteger(v) || v < 1) {
    throw new Error(`Mamba2Config.${name} must be a positive integer, got ${v}`);
  }
}

/** The derived sizes of a Mamba-2 config, after checking it (errors name the field). */
export function mamba2Dims(cfg: Mamba2Config): Mamba2Dims {
  positiveInt("dModel", cfg.dModel);
  positiveInt("dState", cfg.dState);
  positiveInt("headdim", cfg.headdim);
  positiveInt("nGroups", cfg.nGroups);
  positiveInt("dConv", cfg.dConv);
  positiveInt("chunkSize", cfg.chunkSize);
  if (!(cfg.expand > 0)) throw new Error(`Mamba2Config.expand must be > 0, got ${cfg.expand}`);
  if (!(cfg.normEps > 0)) throw new Error(`Mamba2Config.normEps must be > 0, got ${cfg.normEps}`);
  const dInner = cfg.expand * cfg.dModel;
  if (!Number.isInteger(dInner)) {
    throw new Error(
      `Mamba2Config: d_inner = expand·dModel must be an integer, got ${cfg.expand}·${cfg.dModel} = ${dInner}`,
    );
  }
  if (dInner % cfg.headdim !== 0) {
    throw new Error(
      `Mamba2Config.headdim must divide d_inner = ${dInner}, got headdim = ${cfg.headdim}`,
    );
  }
  const nHeads = dInner / cfg.headdim;
  if (nHeads % cfg.nGroups !== 0) {
    throw new Error(
      `Mamba2Config.nGroups must divide the number of heads H = ${nHeads}, got nGroups = ${cfg.nGroups}`,
    );
  }
  if (cfg.normGroups !== undefined) {
    positiveInt("normGroups", cfg.normGroups);
    if (dInner % cfg.normGroups !== 0)
      throw new Error(
        `Mamba2Config.normGroups must divide d_inner = ${dInner}, got ${cfg.normGroups}`,
      );
  }
  if (cfg.dtLimit !== undefined) {
    const [lo, hi] = cfg.dtLimit;
    if (!(lo <= hi) || Number.isNaN(lo) || Number.isNaN(hi))
      throw new Error(
        `Mamba2Config.dtLimit must be [lo, hi] with lo ≤ hi, got [${cfg.dtLimit.join(", ")}]`,
      );
  }
  const convDim = dInner + 2 * cfg.nGroups * cfg.dState;
  return { dInner, nHeads, convDim, inProjDim: dInner + convDim + nHeads };
}

/** No limit on dt: the Hugging Face default time_step_limit (0, ∞). */
export const NO_DT_LIMIT: readonly [number, number] = [0, Number.POSITIVE_INFINITY];

/**
 * The dt limits as float32 values (what every kernel compares and clamps with; torch compares a
 * float32 tensor with its scalar limits in float32).
 */
export function dtLimitOf(cfg: Pick<Mamba2Config, "dtLimit">): readonly [number, number] {
  const [lo, hi] = cfg.dtLimit ?? NO_DT_LIMIT;
  return [Math.fround(lo), Math.fround(hi)];
}

/** Whether the dt limits can change a softplus output (a lower limit above 0 or a finite upper one). */
export function dtLimited(limit: readonly [number, number] | null | undefined): boolean {
  return limit != null && (limit[0] > 0 || limit[1] < Number.POSITIVE_INFINITY);
}

/** The group count of the gated norm (see Mamba2Config.normGroups). */
export function normGroupsOf(cfg: Pick<Mamba2Config, "nGroups" | "normGroups">): number {
  return cfg.normGroups ?? cfg.nGroups;
}

/** The mixer's weights as raw arrays (docs/model.md §6 order), as initialised and as the step reads them. */
export interface Mamba2Weights {
  inProj: Float32Array;
  convWeight: Float32Array;
  convBias: Float32Array;
  dtBias: Float32Array;
  aLog: Float32Array;
  d: Float32Array;
  normWeight: Float32Array;
  outProj: Float32Array;
}
