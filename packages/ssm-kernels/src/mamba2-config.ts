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
  const convDim = dInner + 2 * cfg.nGroups * cfg.dState;
  return { dInner, nHeads, convDim, inProjDim: dInner + convDim + nHeads };
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
