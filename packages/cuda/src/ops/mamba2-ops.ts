/*
 * The Mamba-2 mixer's fused ops of `Mamba2Ops` (@loop/tensor) on the CUDA backend:
 * causalConv1dSiluSplit (conv + silu in one kernel, then a column copy per piece), softplusBias,
 * the SSD scan with the D skip fused (kernels/ssd.cu: the recurrence per (batch, head),
 * chunk checkpoints for the backward) and gatedRmsnorm. Shapes as @loop/ssm-kernels' ops.
 */
import type { SsdOptions, SsdResult } from "@loop/tensor";
import type { CudaContext } from "../context.js";
import type { CudaTensor } from "../cuda-tensor.js";
import { SSD_CHUNK } from "../kernel-table.js";
import { leafTarget, record } from "../tape.js";
import { documents } from "./documents.js";
import { expect, expectShape, rowsOf } from "./shapes.js";
import { splitColumns } from "./split-ops.js";

/** silu(causal depthwise conv(x)) cut into `widths`; `init` the conv history, `seqIdx` resets. */
export function causalConv1dSiluSplit(
  ctx: CudaContext,
  x: CudaTensor,
  w: CudaTensor,
  bias: CudaTensor,
  init: CudaTensor | null,
  widths: readonly number[],
  seqIdx: CudaTensor | null,
): CudaTensor[] {
  const op = "causalConv1dSiluSplit";
  expect(x.shape.length === 3, `${op}: x has shape [${x.shape}], expected [B,T,C]`);
  const [B, T, C] = x.shape as [number, number, number];
  const K = w.shape[w.shape.length - 1]!;
  expect(w.size === C * K, `${op}: weight has shape [${w.shape}], expected [${C},1,K]`);
  expectShape(op, "bias", bias, [C]);
  if (init) expectShape(op, "init", init, [B, C, K - 1]);
  const starts = seqIdx ? documents(ctx, seqIdx, B, T).starts : null;
  const n = B * T * C;
  const y = ctx.empty([B, T, C]);
  ctx.run("conv_silu_fwd", ctx.elems(n), [B, T, C, K, x, w, bias, init, starts, y]);
  const inputs = init ? [x, w, bias, init] : [x, w, bias];
  record(ctx, op, inputs, [y], ([g]) => {
    const gpre = ctx.empty([B, T, C]);
    ctx.run("conv_silu_gpre", ctx.elems(n), [B, T, C, K, x, w, bias, init, starts, g!, gpre]);
    let gx: CudaTensor | null = null;
    let gw: CudaTensor | null = null;
    let gb: CudaTensor | null = null;
    let gi: CudaTensor | null = null;
    if (x.requiresGrad) {
      gx = ctx.empty(x.shape);
      ctx.run("conv_bwd_x", ctx.elems(n), [B, T, C, K, w, starts, gpre, gx, 0]);
    }
    if (w.requiresGrad) {
      const target = leafTarget(ctx, w);
      const out = target?.out ?? ctx.empty(w.shape);
      ctx.run("conv_bwd_w", ctx.elems(C * K, 128), [
        B,
        T,
        C,
        K,
        x,
        init,
        starts,
        gpre,
        out,
        target?.acc ?? 0,
      ]);
      gw = target ? null : out;
    }
    if (bias.requiresGrad) {
      const target = leafTarget(ctx, bias);
      const out = target?.out ?? ctx.empty([C]);
      ctx.run("col_sum", ctx.elems(C, 128), [B * T, C, gpre, out, target?.acc ?? 0]);
      gb = target ? null : out;
    }
    if (init?.requiresGrad && K > 1) {
      gi = ctx.empty(init.shape);
      ctx.run("conv_bwd_init", ctx.elems(B * C * (K - 1)), [B, T, C, K, w, starts, gpre, gi, 0]);
    }
    return init ? [gx, gw, gb, gi] : [gx, gw, gb];
  });
  const pieces = splitColumns(ctx, y, widths);
  // the backward recomputes the pre-activation from x and reads nothing of y: its block goes
  // back now rather than at the end of the step
  ctx.dispose(y);
  return pieces;
}

/**
 * clamp(softplus(raw + bias), lo, hi), bias over the last axis, `limit` [lo, hi] or null for the
 * softplus alone; the gradient is zero where the softplus lies outside the limits.
 */
export function softplusBias(
  ctx: CudaContext,
  raw: CudaTensor,
  bias: CudaTensor,
  limit: readonly [number, number] | null = null,
): CudaTensor {
  const { cols } = rowsOf(raw);
  expectShape("softplusBias", "bias", bias, [cols]);
  const y = ctx.empty(raw.shape);
  const n = raw.size;
  const [lo, hi] = limit ?? [0, 0];
  const clamp = [limit ? 1 : 0, lo, hi] as const;
  ctx.run("softplus_bias_fwd", ctx.elems(n), [n, cols, ...clamp, raw, bias, y]);
  record(ctx, "softplusBias", [raw, bias], [y], ([g]) => {
    const graw = ctx.empty(raw.shape);
    ctx.run("softplus_bias_bwd", ctx.elems(n), [n, cols, ...clamp, g!, raw, bias, graw]);
    let gb: CudaTensor | null = null;
    if (bias.requiresGrad) {
      const target = leafTarget(ctx, bias);
      const out = target?.out ?? ctx.empty(bias.shape);
      ctx.run("col_sum", ctx.elems(cols, 128), [n / cols, cols, graw, out, target?.acc ?? 0]);
      gb = target ? null : out;
    }
    return [raw.requiresGrad ? graw : null, gb];
  });
  return y;
}

const round32 = (n: number) => Math.max(32, Math.ceil(n / 32) * 32);

/** The chunked SSD scan, D skip fused (see the file comment). */
export function ssdScanChunked(
  ctx: CudaContext,
  x: CudaTensor,
  dt: CudaTensor,
  A: CudaTensor,
  Bm: CudaTensor,
  Cm: CudaTensor,
  opts: SsdOptions<CudaTensor, CudaTensor>,
): SsdResult<CudaTensor> {
  const op = "ssdScanChunked";
  expect(x.shape.length === 4, `${op}: x has shape [${x.shape}], expected [B,T,H,P]`);
  const [B, T, H, P] = x.shape as [number, number, number, number];
  expect(Bm.shape.length === 4, `${op}: B has shape [${Bm.shape}], expected [B,T,G,N]`);
  const G = Bm.shape[2]!;
  const N = Bm.shape[3]!;
  expectShape(op, "dt", dt, [B, T, H]);
  expectShape(op, "A", A, [H]);
  expectShape(op, "B", Bm, [B, T, G, N]);
  expectShape(op, "C", Cm, [B, T, G, N]);
  expect(H % G === 0, `${op}: ${H} heads do not split into ${G} groups`);
  const s0 = opts.initialState ?? null;
  const D = opts.D ?? null;
  if (s0) expectShape(op, "initialState", s0, [B, H, P, N]);
  if (D) expectShape(op, "D", D, [H]);
  const resets = opts.seqIdx ? documents(ctx, opts.seqIdx, B, T).resets : null;
  const inputs = [x, dt, A, Bm, Cm, ...(s0 ? [s0] : []), ...(D ? [D] : [])];
  const training = ctx.recording && inputs.some((t) => t.requiresGrad);
  const nChunks = Math.ceil(T / SSD_CHUNK);
  const ckpt = training ? ctx.empty([B, H, nChunks, N, P]) : null;
  const y = ctx.empty(x.shape);
  const state = ctx.empty([B, H, P, N]);
  const fwdShared = (N * P + 2 * N) * 4;
  ctx.run("ssd_fwd", { grid: [B * H, 1, 1], block: [round32(P), 1, 1], shared: fwdShared }, [
    T,
    H,
    P,
    G,
    N,
    x,
    dt,
    A,
    Bm,
    Cm,
    s0,
    D,
    resets,
    y,
    state,
    ckpt,
  ]);
  record(ctx, op, inputs, [y, state], ([gy, gs]) => {
    const scratch = ctx.empty([B * H * (SSD_CHUNK + 1) * N * P]);
    const gx = ctx.empty(x.shape);
    const gdt = ctx.empty(dt.shape);
    const gBh = ctx.empty([B, T, H, N]);
    const gCh = ctx.empty([B, T, H, N]);
    const gAbh = ctx.empty([B, H]);
    const gDbh = D ? ctx.empty([B, H]) : null;
    const gs0 = s0 ? ctx.empty(s0.shape) : null;
    ctx.run(
      "ssd_bwd",
      {
        grid: [B * H, 1, 1],
        block: [round32(Math.max(P, N)), 1, 1],
        shared: (N * P + 2 * N + 2 * P + 32) * 4,
      },
      [
        T,
        H,
        P,
        G,
        N,
        x,
        dt,
        A,
        Bm,
        Cm,
        D,
        resets,
        gy,
        gs,
        ckpt,
        scratch,
        gx,
        gdt,
        gBh,
        gCh,
        gAbh,
        gDbh,
        gs0,
      ],
    );
    const gB = ctx.empty(Bm.shape);
    const gC = ctx.empty(Cm.shape);
    ctx.run("ssd_group_sum", ctx.elems(B * T * G * N), [B * T, H, G, N, gBh, gB, 0]);
    ctx.run("ssd_group_sum", ctx.elems(B * T * G * N), [B * T, H, G, N, gCh, gC, 0]);
    const gA = ctx.empty([H]);
    ctx.run("col_sum", ctx.elems(H, 128), [B, H, gAbh, gA, 0]);
    let gD: CudaTensor | null = null;
    if (D?.requiresGrad) {
      const target = leafTarget(ctx, D);
      const out = target?.out ?? ctx.empty([H]);
      ctx.run("col_sum", ctx.elems(H, 128), [B, H, gDbh, out, target?.acc ?? 0]);
      gD = target ? null : out;
    }
    const out: (CudaTensor | null)[] = [gx, gdt, gA, gB, gC];
    if (s0) out.push(gs0!);
    if (D) out.push(gD);
    return out;
  });
  return { y, state };
}

/** rmsnorm over `groups` groups of y ⊙ silu(z), times w. */
export function gatedRmsnorm(
  ctx: CudaContext,
  y: CudaTensor,
  z: CudaTensor,
  w: CudaTensor,
  groups: number,
  eps: number,
): CudaTensor {
  const op = "gatedRmsnorm";
  const { rows, cols: D } = rowsOf(y);
  expectShape(op, "z", z, y.shape);
  expectShape(op, "weight", w, [D]);
  expect(groups > 0 && D % groups === 0, `${op}: ${D} channels do not split into ${groups} groups`);
  const out = ctx.empty(y.shape);
  const v = ctx.empty(y.shape);
  const rstd = ctx.empty([rows * groups]);
  if (rows > 0)
    ctx.run("gated_rmsnorm_fwd", ctx.rows(rows, 256, groups), [
      D,
      groups,
      eps,
      y,
      z,
      w,
      out,
      v,
      rstd,
    ]);
  record(ctx, op, [y, z, w], [out], ([g]) => {
    const gy = y.requiresGrad ? ctx.empty(y.shape) : null;
    const gz = z.requiresGrad ? ctx.empty(z.shape) : null;
    if (gy || gz)
      ctx.run("gated_rmsnorm_bwd", ctx.rows(rows, 256, groups), [
        D,
        groups,
        g!,
        y,
        z,
        w,
        v,
        rstd,
        gy,
        gz,
      ]);
    let gw: CudaTensor | null = null;
    if (w.requiresGrad) {
      const target = leafTarget(ctx, w);
      const out = target?.out ?? ctx.empty(w.shape);
      ctx.run("norm_wgrad", ctx.elems(D, 128), [
        rows,
        D,
        groups,
        g!,
        v,
        rstd,
        out,
        target?.acc ?? 0,
      ]);
      gw = target ? null : out;
    }
    return [gy, gz, gw];
  });
  return out;
}
