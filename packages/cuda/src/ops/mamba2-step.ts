/*
 * The Mamba-2 mixer's recurrent decode step on the CUDA backend (kernels/decode.cu; the CPU's
 * @loop/ssm-kernels `mamba2StepRaw` and `mamba2AbsorbRaw`, webgpu's `mamba2StepState`). A full
 * step is
 *   zx = linear(u, in_proj);  { y, z } = mamba2StepState(ctx, cfg, zx, state, weights);
 *   out = linear(gatedRmsnorm(y, z, norm.weight, normGroups, eps), out_proj)
 * with the state advanced in place on the device (nothing read back). Inference only: not
 * recorded. Shapes: zx [B, E] (z | xBC | dt), state conv [S, C, K−1], ssm [S, H, P, N].
 */
import type { CudaContext } from "../context.js";
import type { CudaTensor } from "../cuda-tensor.js";
import { expect, expectShape } from "./shapes.js";

/** The sizes the step reads from a Mamba-2 config. */
export interface CudaMamba2StepConfig {
  dState: number;
  headdim: number;
  nGroups: number;
  dConv: number;
  /** dt clamped to [lo, hi] after its softplus (the time_step_limit); absent: no limit. */
  dtLimit?: readonly [number, number];
}

/** Decode state of one mixer on the device: conv [S, C, K−1] (oldest first), ssm [S, H, P, N]. */
export interface CudaMamba2State {
  conv: CudaTensor;
  ssm: CudaTensor;
}

/** The Mamba-2 weights a decode step reads besides the projections. */
export interface CudaMamba2StepWeights {
  /** [C, 1, K] or [C, K]. */
  convWeight: CudaTensor;
  convBias: CudaTensor;
  dtBias: CudaTensor;
  aLog: CudaTensor;
  d: CudaTensor;
}

/** The largest finite float32: the kernel's stand-in for an upper limit of +∞. */
const F32_MAX = 3.4028234663852886e38;

/**
 * One token per row: zx [B, E] → y (the SSM output with the D skip) and z, both [B, Di]; the
 * state advances in place. With `rows` (an i32 tensor [B] of distinct state rows) input row j
 * advances state row rows[j]. With `absorb`, the state update alone (early exit's skipped loop
 * steps): nothing is returned.
 */
export function mamba2StepState(
  ctx: CudaContext,
  cfg: CudaMamba2StepConfig,
  zx: CudaTensor,
  state: CudaMamba2State,
  w: CudaMamba2StepWeights,
  opts: { rows?: CudaTensor | null; absorb?: boolean } = {},
): { y: CudaTensor; z: CudaTensor } | null {
  const op = "cuda mamba2StepState";
  const { dState: N, headdim: P, nGroups: G, dConv: K } = cfg;
  const H = w.dtBias.size;
  const Di = H * P;
  const C = Di + 2 * G * N;
  const E = Di + C + H;
  expect(
    zx.shape.length === 2 && zx.shape[1] === E,
    `${op}: zx has shape [${zx.shape}], expected [B,${E}] (z | xBC | dt)`,
  );
  const B = zx.shape[0]!;
  const S = state.ssm.shape[0]!;
  const rows = opts.rows ?? null;
  if (rows) {
    expect(rows.dtype === "i32", `${op}: rows must be an i32 tensor`);
    expectShape(op, "rows", rows, [B]);
    // each state row takes one input row: two writers of one row would race on the device
    const ids = rows.hostInt;
    expect(
      !ids || (new Set(ids).size === B && ids.every((s) => s >= 0 && s < S)),
      `${op}: rows must be ${B} distinct state rows of 0..${S - 1}`,
    );
  } else expect(S === B, `${op}: the state holds ${S} rows, zx ${B} (pass rows to pick)`);
  expectShape(op, "state.conv", state.conv, [S, C, K - 1]);
  expectShape(op, "state.ssm", state.ssm, [S, H, P, N]);
  expect(
    w.convWeight.size === C * K,
    `${op}: convWeight has shape [${w.convWeight.shape}], expected [${C},1,${K}]`,
  );
  expectShape(op, "convBias", w.convBias, [C]);
  expectShape(op, "aLog", w.aLog, [H]);
  expectShape(op, "D", w.d, [H]);
  expect(H % G === 0, `${op}: ${G} groups do not divide ${H} heads`);
  const lim = cfg.dtLimit;
  expect(!lim || lim[0] <= lim[1], `${op}: dtLimit must be [lo, hi] with lo ≤ hi`);
  // (a softplus is never negative: a lower limit ≤ 0 is the same as 0)
  const dtLo = lim ? Math.max(0, Math.fround(lim[0])) : 0;
  const dtHi = lim ? Math.min(F32_MAX, Math.fround(lim[1])) : F32_MAX;
  const xbc = ctx.empty([B, C]);
  const z = opts.absorb ? null : ctx.empty([B, Di]);
  const y = opts.absorb ? null : ctx.empty([B, Di]);
  ctx.run("mamba2_step_conv", ctx.elems(B * (Di + C)), [
    B,
    Di,
    C,
    E,
    K,
    rows,
    zx,
    w.convWeight,
    w.convBias,
    state.conv,
    xbc,
    z,
  ]);
  ctx.run("mamba2_step_ssm", ctx.elems(B * H * P), [
    B,
    H,
    P,
    N,
    G,
    Di,
    C,
    E,
    rows,
    zx,
    xbc,
    w.dtBias,
    w.aLog,
    w.d,
    state.ssm,
    y,
    dtLo,
    dtHi,
  ]);
  ctx.dispose(xbc);
  return y && z ? { y, z } : null;
}
