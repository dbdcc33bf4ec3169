/*
 * The Mamba-2 mixer (docs/model.md §3) as a module: u [B,T,D] → [B,T,D].
 *   zxbcdt = u·in_projᵀ → z [Di], xBC [C], dt [H];  xBC ← silu(causal_conv1d(xBC))
 *   x [H,P], B [G,N], C [G,N] ← xBC;  dt = softplus(dt + dt_bias);  A = −exp(A_log)
 *   y = SSD(x, dt, A, B, C) + D ⊙ x  (chunked scan, the D skip fused into it);  y ← rmsnorm_grouped(y ⊙ silu(z)) ⊙ norm.weight
 *   out = y·out_projᵀ
 * `forward` and `prefill` are differentiable (prefill also advances a decode state in place);
 * `step` advances one token in place for inference (mamba2-step.ts); `stepResidual` is the
 * pre-norm residual layer around it (one native call where the kernel is registered).
 */
import {
  add,
  cpuTensorOps,
  cpuTransferOps,
  IntTensor,
  type NamedParameter,
  parameter,
  Rng,
  rmsnorm,
  type SequenceMixer,
  shapeStr,
  Tensor,
  weightLookup,
} from "@loop/tensor";
import { causalConv1dState } from "./causal-conv1d.js";
import { cpuMamba2Ops } from "./cpu-mamba2-ops.js";
import { type Mamba2Config, type Mamba2Weights, mamba2Dims } from "./mamba2-config.js";
import { initMamba2 } from "./mamba2-init.js";
import { mamba2Mix } from "./mamba2-mix.js";
import { withStateRows } from "./mamba2-rows.js";
import { mamba2AbsorbRaw, mamba2ResidualStepNative, mamba2StepRaw } from "./mamba2-step.js";

/** The CPU ops the differentiable forward (mamba2-mix.ts) runs on. */
const CPU_OPS = { ...cpuTransferOps, ...cpuTensorOps, ...cpuMamba2Ops };

/** Decode state of one mixer: conv [B, C, K−1] (oldest first) and ssm [B, H, P, N]. */
export interface Mamba2State {
  conv: Float32Array;
  ssm: Float32Array;
  batch: number;
}

/**
 * How a Mamba-2 mixer initialises: its seeded stream and the residual depth that scales out_proj.
 */
export interface Mamba2Options {
  /** Initialisation stream (default `new Rng(0)`). */
  rng?: Rng;
  /** Layers in the stack: out_proj is scaled by 1/sqrt(nLayers) (default 1). */
  nLayers?: number;
}

/**
 * The Mamba-2 mixer as a `SequenceMixer`: in_proj, causal conv1d, chunked SSD scan, gated RMSNorm,
 * out_proj; a conv + SSM state as its decoding state.
 */
export class Mamba2Mixer implements SequenceMixer<Mamba2State> {
  /** Its decoding state is recurrent: a token that skips a step may leave it as it is. */
  readonly positional = false;
  /** The configuration it was built with (a copy). */
  readonly cfg: Mamba2Config;
  /** Inner width Di = expand·D. */
  readonly dInner: number;
  /** SSM heads H = Di / headdim. */
  readonly nHeads: number;
  /** Channels of the causal conv1d: Di + 2·G·Ns (x, B, C). */
  readonly convDim: number;
  /** Rows of in_proj: 2·Di + 2·G·Ns + H (z, x, B, C, dt). */
  readonly inProjDim: number;
  /** `in_proj.weight` [inProjDim, D]. */
  readonly inProj: Tensor;
  /** `conv1d.weight` [convDim, 1, d_conv], depthwise. */
  readonly convWeight: Tensor;
  /** `conv1d.bias` [convDim]. */
  readonly convBias: Tensor;
  /** `dt_bias` `[H]`: added to dt before the softplus. */
  readonly dtBias: Tensor;
  /** `A_log` `[H]`: the decay is A = −exp(A_log). */
  readonly aLog: Tensor;
  /** `D` `[H]`: the skip connection's per-head weight. */
  readonly d: Tensor;
  /** `norm.weight` `[Di]`: the gated RMSNorm's scale. */
  readonly normWeight: Tensor;
  /** `out_proj.weight` [D, Di]. */
  readonly outProj: Tensor;

  constructor(cfg: Mamba2Config, opts: Mamba2Options = {}) {
    const dims = mamba2Dims(cfg);
    const nLayers = opts.nLayers ?? 1;
    if (!Number.isInteger(nLayers) || nLayers < 1) {
      throw new Error(`Mamba2Mixer: nLayers must be a positive integer, got ${nLayers}`);
    }
    this.cfg = { ...cfg };
    this.dInner = dims.dInner;
    this.nHeads = dims.nHeads;
    this.convDim = dims.convDim;
    this.inProjDim = dims.inProjDim;
    const w = initMamba2(cfg, dims, opts.rng ?? new Rng(0), nLayers);
    const { dModel: D, dConv: K } = cfg;
    this.inProj = parameter(w.inProj, [dims.inProjDim, D], "in_proj.weight");
    this.convWeight = parameter(w.convWeight, [dims.convDim, 1, K], "conv1d.weight");
    this.convBias = parameter(w.convBias, [dims.convDim], "conv1d.bias");
    this.dtBias = parameter(w.dtBias, [dims.nHeads], "dt_bias");
    this.aLog = parameter(w.aLog, [dims.nHeads], "A_log");
    this.d = parameter(w.d, [dims.nHeads], "D");
    this.normWeight = parameter(w.normWeight, [dims.dInner], "norm.weight");
    this.outProj = parameter(w.outProj, [D, dims.dInner], "out_proj.weight");
  }

  /** The weight named `name` (docs/model.md §6, relative to the mixer), for mamba2-mix.ts. */
  readonly weight = weightLookup(this, "Mamba2Mixer");

  /** Its eight weights with their docs/model.md §6 names (relative to the mixer); biases, `dt_bias`, `A_log`, `D` and the norm are not weight-decayed. */
  parameters(): NamedParameter[] {
    return [
      { name: "in_proj.weight", tensor: this.inProj, decay: true },
      { name: "conv1d.weight", tensor: this.convWeight, decay: true },
      { name: "conv1d.bias", tensor: this.convBias, decay: false },
      { name: "dt_bias", tensor: this.dtBias, decay: false },
      { name: "A_log", tensor: this.aLog, decay: false },
      { name: "D", tensor: this.d, decay: false },
      { name: "norm.weight", tensor: this.normWeight, decay: false },
      { name: "out_proj.weight", tensor: this.outProj, decay: true },
    ];
  }

  /**
   * u [B,T,D] → [B,T,D], from a zero state. With `seqIdx` ([B·T] document index per position,
   * mamba_ssm's seq_idx) rows pack several documents: conv and scan reset at each document start.
   */
  forward(u: Tensor, seqIdx: Int32Array | null = null): Tensor {
    return this.run(u, null, false, seqIdx).y;
  }

  /**
   * The next T tokens u [B,T,D] → [B,T,D] from `state`, which is advanced in place as T `step`
   * calls would advance it (the chunked scan from the carried conv history and SSM state).
   * Differentiable in u and the weights, like `forward`.
   */
  prefill(state: Mamba2State, u: Tensor): Tensor {
    const r = this.run(u, state, true);
    state.conv.set(r.state!.conv);
    state.ssm.set(r.state!.ssm);
    return r.y;
  }

  /** `fn` on the rows `rows` of the state alone (mamba2-rows.ts), what it changed kept. */
  withRows<R>(state: Mamba2State, rows: readonly number[], fn: (sub: Mamba2State) => R): R {
    return withStateRows(state, rows, fn);
  }

  /** Nothing to do: a recurrent state has no position (SequenceMixer). */
  endPosition(_state: Mamba2State): void {}

  /** A zero state for `batch` rows (a recurrent state has no capacity: `_capacity` is unused). */
  initState(batch: number, _capacity = 0): Mamba2State {
    if (!Number.isInteger(batch) || batch < 1) {
      throw new Error(`Mamba2Mixer.initState: batch must be a positive integer, got ${batch}`);
    }
    const { nHeads: H, convDim: C } = this;
    const { headdim: P, dState: N, dConv: K } = this.cfg;
    return {
      conv: new Float32Array(batch * C * (K - 1)),
      ssm: new Float32Array(batch * H * P * N),
      batch,
    };
  }

  /** One token u [B,D] → [B,D]; advances `state` in place. Inference only (not recorded). */
  step(state: Mamba2State, u: Tensor): Tensor {
    const batch = this.tokenBatch("step", "u", u, state);
    const w = this.rawWeights();
    const out = mamba2StepRaw(this.cfg, this, w, batch, u.data, state.conv, state.ssm);
    return new Tensor(out, [batch, this.cfg.dModel]);
  }

  /** Check `method`'s one-token input x [B,D] (`arg`) and the state it advances; returns B. */
  private tokenBatch(method: string, arg: string, x: Tensor, state: Mamba2State): number {
    const D = this.cfg.dModel;
    if (x.rank !== 2 || x.shape[1] !== D) {
      throw new Error(`Mamba2Mixer.${method}: ${arg} must be [B,${D}], got ${shapeStr(x.shape)}`);
    }
    const batch = x.shape[0]!;
    this.checkState(method, state, batch);
    return batch;
  }

  /**
   * The pre-norm residual layer around this mixer for one token (docs/model.md §2):
   * h [B,D] → h + step(rmsnorm(h, normWeight, eps)), advancing `state` in place. Inference only.
   * With the native kernel registered the norm, the step and the add are one call (decoding
   * spends more on a small op's overhead than on its arithmetic); otherwise those three ops.
   */
  stepResidual(state: Mamba2State, h: Tensor, normWeight: Tensor, eps: number): Tensor {
    const D = this.cfg.dModel;
    const batch = this.tokenBatch("stepResidual", "h", h, state);
    if (normWeight.rank !== 1 || normWeight.size !== D) {
      throw new Error(
        `Mamba2Mixer.stepResidual: normWeight must be [${D}], got ${shapeStr(normWeight.shape)}`,
      );
    }
    const out = mamba2ResidualStepNative(
      this.cfg,
      this,
      this.rawWeights(),
      batch,
      h.data,
      normWeight.data,
      eps,
      state.conv,
      state.ssm,
    );
    if (out) return new Tensor(out, [batch, D]);
    return add(h, this.step(state, rmsnorm(h, normWeight, eps)));
  }

  /**
   * Take one token into the state rows `rows` (ascending indices into state's batch) without
   * reading anything out: the state update of `step` alone (mamba2AbsorbRaw). u [rows.length, D].
   * Early-exit decoding uses it for steps that an exited token skips.
   */
  absorb(state: Mamba2State, u: Tensor, rows: readonly number[]): void {
    const D = this.cfg.dModel;
    if (u.rank !== 2 || u.shape[1] !== D || u.shape[0] !== rows.length) {
      throw new Error(
        `Mamba2Mixer.absorb: u must be [${rows.length},${D}] (one row per state row), got ${shapeStr(u.shape)}`,
      );
    }
    this.checkState("absorb", state, state.batch);
    for (const b of rows)
      if (!Number.isInteger(b) || b < 0 || b >= state.batch)
        throw new Error(`Mamba2Mixer.absorb: row ${b} is outside [0, ${state.batch})`);
    mamba2AbsorbRaw(this.cfg, this, this.rawWeights(), rows, u.data, state.conv, state.ssm);
  }

  private rawWeights(): Mamba2Weights {
    return {
      inProj: this.inProj.data,
      convWeight: this.convWeight.data,
      convBias: this.convBias.data,
      dtBias: this.dtBias.data,
      aLog: this.aLog.data,
      d: this.d.data,
      normWeight: this.normWeight.data,
      outProj: this.outProj.data,
    };
  }

  private checkState(op: string, st: Mamba2State, batch: number): void {
    const { nHeads: H, convDim: C } = this;
    const { headdim: P, dState: N, dConv: K } = this.cfg;
    if (st.batch !== batch) {
      throw new Error(
        `Mamba2Mixer.${op}: state.batch must be ${batch} (input batch), got ${st.batch}`,
      );
    }
    if (st.conv.length !== batch * C * (K - 1)) {
      throw new Error(
        `Mamba2Mixer.${op}: state.conv must hold [${batch},${C},${K - 1}] = ${batch * C * (K - 1)} values, got ${st.conv.length}`,
      );
    }
    if (st.ssm.length !== batch * H * P * N) {
      throw new Error(
        `Mamba2Mixer.${op}: state.ssm must hold [${batch},${H},${P},${N}] = ${batch * H * P * N} values, got ${st.ssm.length}`,
      );
    }
  }

  /** The state after u is assembled only when asked for (a copy per call; forward skips it). */
  private run(
    u: Tensor,
    state: Mamba2State | null,
    wantState: boolean,
    seqIdx: Int32Array | null = null,
  ): { y: Tensor; state: Mamba2State | null } {
    const { dModel: D, dState: N, headdim: P, dConv: K } = this.cfg;
    const { nHeads: H, convDim: C } = this;
    if (u.rank !== 3 || u.shape[2] !== D) {
      throw new Error(`Mamba2Mixer: input u must be [B,T,${D}], got ${shapeStr(u.shape)}`);
    }
    const [batch, T] = u.shape as [number, number, number];
    if (state) this.checkState("prefill", state, batch);
    // copies: `prefill` overwrites the state, and a backward pass reads these inputs later
    const convInit = state ? new Tensor(state.conv.slice(), [batch, C, K - 1]) : null;
    const ssmInit = state ? new Tensor(state.ssm.slice(), [batch, H, P, N]) : null;
    const seq = seqIdx ? new IntTensor(seqIdx, [seqIdx.length]) : null;
    const r = mamba2Mix(CPU_OPS, this.cfg, this.weight, u, { seqIdx: seq, convInit, ssmInit });
    const { y: out, xbc } = r;
    if (!wantState) return { y: out, state: null };
    const conv = causalConv1dState(
      { batch, seqLen: T, channels: C, width: K },
      xbc.data,
      state ? state.conv : null,
    );
    return { y: out, state: { conv, ssm: r.state.data.slice(), batch } };
  }
}
