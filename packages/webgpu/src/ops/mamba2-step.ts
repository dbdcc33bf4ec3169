/*
 * The recurrent decode step of the Mamba-2 mixer on the device (the GPU counterpart of
 * @loop/ssm-kernels' `mamba2StepRaw`; kernels/mamba2-step.ts). A full step is
 *   zx = linear(u, in_proj);  { y, z } = mamba2StepState(cfg, zx, state, weights);
 *   out = linear(gatedRmsnorm(y, z, norm.weight, normGroups ?? nGroups, normEps), out_proj)
 * with the state updated in place on the device (no read-back). Inference only: not recorded.
 */
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import {
  mamba2StepConvKernel,
  mamba2StepSsmKernel,
  STEP_CONV_GROUP,
} from "../kernels/mamba2-step.js";
import { placeholder } from "./optional-inputs.js";
import { shapeStr } from "./shape-str.js";

/** The sizes the step reads from a Mamba-2 config (a `Mamba2Config` fits). */
export interface GpuMamba2StepConfig {
  dState: number;
  headdim: number;
  nGroups: number;
  dConv: number;
  /** dt clamped to [lo, hi] after its softplus (the time_step_limit); absent: no limit. */
  dtLimit?: readonly [number, number];
}

/** The largest finite float32: the kernel's stand-in for an upper limit of +∞. */
const F32_MAX = 3.4028234663852886e38;

/** Decode state of one mixer on the device: conv [B,C,K−1] (oldest first), ssm [B,H,P,N]. */
export interface GpuMamba2State {
  conv: GpuTensor;
  ssm: GpuTensor;
}

/** The Mamba-2 weights one recurrent GPU decode step reads besides the projections. */
export interface GpuMamba2StepWeights {
  convWeight: GpuTensor;
  convBias: GpuTensor;
  dtBias: GpuTensor;
  aLog: GpuTensor;
  d: GpuTensor;
}

/**
 * One token: zx [B, E] (in_proj output: z | xBC | dt) → y (the SSM output with the D skip) and
 * z, both [B, Di]; advances `state` in place. With `rows` (i32 [B], distinct indices into the
 * state's batch) input row j advances state row rows[j] only — `Mamba2Mixer.absorb` for
 * early-exit decoding (y and z are then not needed; they come at no extra pass).
 */
export function mamba2StepState(
  cfg: GpuMamba2StepConfig,
  zx: GpuTensor,
  state: GpuMamba2State,
  w: GpuMamba2StepWeights,
  rows: GpuTensor | null = null,
): { y: GpuTensor; z: GpuTensor } {
  const op = "webgpu mamba2StepState";
  const { dState: N, headdim: P, nGroups: G, dConv: K } = cfg;
  const H = w.dtBias.size;
  const Di = H * P;
  const C = Di + 2 * G * N;
  const E = Di + C + H;
  if (zx.rank !== 2 || zx.shape[1] !== E)
    throw new Error(`${op}: zx must be [B,${E}] (z | xBC | dt), got ${shapeStr(zx.shape)}`);
  const batch = zx.shape[0]!;
  const stateBatch = state.ssm.shape[0]!;
  if (rows && (rows.dtype !== "i32" || rows.rank !== 1 || rows.size !== batch))
    throw new Error(
      `${op}: rows must be an i32 tensor of [${batch}] (one state row per input row), got ${rows.dtype} ${shapeStr(rows.shape)}`,
    );
  if (!rows && stateBatch !== batch)
    throw new Error(`${op}: the state holds ${stateBatch} rows, zx ${batch} (pass rows to pick)`);
  const want: [string, GpuTensor, number[]][] = [
    ["state.conv", state.conv, [stateBatch, C, K - 1]],
    ["state.ssm", state.ssm, [stateBatch, H, P, N]],
    ["convWeight", w.convWeight, [C, 1, K]],
    ["convBias", w.convBias, [C]],
    ["aLog", w.aLog, [H]],
    ["D", w.d, [H]],
  ];
  for (const [name, t, shape] of want) {
    const ok =
      shapeStr(t.shape) === shapeStr(shape) ||
      (name === "convWeight" && shapeStr(t.shape) === shapeStr([C, K]));
    if (!ok) throw new Error(`${op}: ${name} must be ${shapeStr(shape)}, got ${shapeStr(t.shape)}`);
  }
  if (H % G !== 0) throw new Error(`${op}: nGroups ${G} must divide the number of heads ${H}`);
  const lim = cfg.dtLimit;
  if (lim && !(lim[0] <= lim[1]))
    throw new Error(`${op}: dtLimit must be [lo, hi] with lo ≤ hi, got [${lim.join(", ")}]`);
  // (a softplus is never negative: a lower limit ≤ 0 is the same as 0)
  const dtLo = lim ? Math.max(0, Math.fround(lim[0])) : 0;
  const dtHi = lim ? Math.min(F32_MAX, Math.fround(lim[1])) : F32_MAX;
  const ctx = zx.ctx;
  const rowBuf = rows?.buffer ?? placeholder(ctx);
  const hasRows = rows ? 1 : 0;
  const xbc = emptyLike(ctx, [batch, C]);
  const z = emptyLike(ctx, [batch, Di]);
  const y = emptyLike(ctx, [batch, Di]);
  ctx.run(
    mamba2StepConvKernel,
    { rows: rowBuf, zx, weight: w.convWeight, bias: w.convBias, conv: state.conv, xbc, z },
    { B: batch, Di, C, E, K, hasRows },
    grid(batch * (Di + C), STEP_CONV_GROUP),
  );
  ctx.run(
    mamba2StepSsmKernel,
    { rows: rowBuf, zx, xbc, dtBias: w.dtBias, aLog: w.aLog, d: w.d, ssm: state.ssm, y },
    { B: batch, H, P, N, G, Di, C, E, hasRows, dtLo, dtHi },
    grid(batch * H, 1),
  );
  xbc.dispose();
  return { y, z };
}
