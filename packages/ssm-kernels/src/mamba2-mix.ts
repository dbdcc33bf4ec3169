/*
 * The Mamba-2 mixer's differentiable forward (docs/model.md §3), written once against the
 * backend ops (`ModelOps` of @loop/tensor) and its weights by their §6 names (relative to the
 * mixer: "in_proj.weight", …). The CPU's `Mamba2Mixer` and every device model run this:
 *   z, xBC, dt ← u·in_projᵀ;  x, B, C ← silu(causal_conv1d(xBC));  dt ← clamp(softplus(dt + dt_bias), dtLimit)
 *   A = −exp(A_log) (negExp);  y = SSD(x, dt, A, B, C) + D ⊙ x;  out = (gatedRmsnorm(y, z)·norm.weight)·out_projᵀ
 * (the norm over normGroups groups of channels: nGroups unless the config says otherwise)
 * From a zero state, or (prefill) from a carried conv history and SSM state.
 */
import { linearSplitOn, type Mamba2Ops, type TensorOps, type TransferOps } from "@loop/tensor";
import { type Mamba2Config, mamba2Dims, normGroupsOf } from "./mamba2-config.js";

/** The ops the mixer's forward uses. */
export type Mamba2MixOps<T, I> = Pick<
  TensorOps<T, I>,
  "linear" | "linearSplit" | "split" | "unary" | "reshape" | "done"
> &
  Pick<TransferOps<T, I>, "shapeOf"> &
  Mamba2Ops<T, I>;

/** Options of one Mamba-2 mix: packed documents and the conv/SSM states to continue from. */
export interface Mamba2MixOptions<T, I> {
  /** Packed documents: [B·T] document index per position (conv and scan reset at each start). */
  seqIdx?: I | null;
  /** Conv history [B, C, K−1] to continue from (zeros when absent). */
  convInit?: T | null;
  /** SSM state [B, H, P, N] to continue from (zeros when absent). */
  ssmInit?: T | null;
}

/** out [B,T,D]; xbc, the conv input [B,T,C] (its last K−1 rows are the next conv history); the SSM state after. */
export interface Mamba2MixResult<T> {
  y: T;
  xbc: T;
  state: T;
}

/** u [B,T,D] → the mixer's output; `w(name)` the weight named `name` (§6, relative to the mixer). */
export function mamba2Mix<T, I>(
  ops: Mamba2MixOps<T, I>,
  cfg: Mamba2Config,
  w: (name: string) => T,
  u: T,
  opts: Mamba2MixOptions<T, I> = {},
): Mamba2MixResult<T> {
  const { dModel: D, dState: N, headdim: P, nGroups: G, chunkSize, normEps } = cfg;
  const { dInner: Di, nHeads: H, convDim: C } = mamba2Dims(cfg);
  const shape = ops.shapeOf(u);
  if (shape.length !== 3 || shape[2] !== D) {
    throw new Error(`Mamba2Mixer: input u must be [B,T,${D}], got [${shape.join(",")}]`);
  }
  const [batch, T] = shape as [number, number, number];
  const seqIdx = opts.seqIdx ?? null;
  // in_proj straight into its three pieces (no split copy)
  const [z, xbc, dtRaw] = linearSplitOn(ops, u, w("in_proj.weight"), [Di, C, H]) as [T, T, T];
  // conv, silu and the x | B | C split in one op (no pre-activation, no split copies)
  const [xs, bs, cs] = ops.causalConv1dSiluSplit(
    xbc,
    w("conv1d.weight"),
    w("conv1d.bias"),
    opts.convInit ?? null,
    [Di, G * N, G * N],
    seqIdx,
  ) as [T, T, T];
  const x = ops.reshape(xs, [batch, T, H, P]);
  const dt = ops.softplusBias(dtRaw, w("dt_bias"), cfg.dtLimit ?? null);
  const A = ops.unary("negExp", w("A_log"));
  const scan = ops.ssdScanChunked(
    x,
    dt,
    A,
    ops.reshape(bs, [batch, T, G, N]),
    ops.reshape(cs, [batch, T, G, N]),
    {
      chunkSize,
      initialState: opts.ssmInit ?? null,
      D: w("D"), // the D skip inside the scan (no pass of its own)
      seqIdx,
    },
  );
  const y = ops.reshape(scan.y, [batch, T, Di]);
  const normed = ops.gatedRmsnorm(y, z, w("norm.weight"), normGroupsOf(cfg), normEps);
  const out = ops.linear(normed, w("out_proj.weight"));
  ops.done?.(normed);
  return { y: out, xbc, state: scan.state };
}
