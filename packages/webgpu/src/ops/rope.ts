/*
 * RoPE on GPU tensors, as @loop/attention's `rope` (same options, same shapes):
 * x [B, T, H, hd] → [B, T, H, hd]; the backward rotates ∂y back by −a. The (cos, sin) table of
 * each (hd, T, theta, offset) is computed on the CPU in float64 by `ropeTables` and kept on the
 * device (the last few per context: every layer and loop step asks for the same one).
 */
import { type RopeOptions, ropeTables } from "@loop/tensor";
import type { GpuContext } from "../gpu-context.js";
import { emptyLike, type GpuTensor, uploadTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import { ROPE_GROUP, ropeKernel, ropePairKernel } from "../kernels/rope.js";
import { getOrMake } from "../memo.js";
import { recordGpu } from "../tape.js";

const TABLES_KEPT = 4;
const tables = new WeakMap<GpuContext, { key: string; tab: GpuTensor }[]>();

/** The device table [T, hd/2, 2] of (cos, sin); ropeTables checks hd, theta and offset. */
export function ropeTable(ctx: GpuContext, hd: number, T: number, theta: number, offset: number) {
  const key = `${hd},${T},${theta},${offset}`;
  const list = getOrMake(tables, ctx, () => []);
  const hit = list.find((e) => e.key === key);
  if (hit && !hit.tab.released) return hit.tab;
  const { cos, sin } = ropeTables(hd, T, theta, offset);
  const interleaved = new Float32Array(2 * cos.length);
  for (let i = 0; i < cos.length; i++) {
    interleaved[2 * i] = cos[i]!;
    interleaved[2 * i + 1] = sin[i]!;
  }
  const tab = uploadTensor(ctx, interleaved, [T, hd / 2, 2], { persistent: true });
  list.unshift({ key, tab });
  // Commands already enqueued may still read an evicted table: the queue runs them before any
  // later write into its recycled buffer.
  if (list.length > TABLES_KEPT) list.pop()?.tab.dispose();
  return tab;
}

function rotate(x: GpuTensor, tab: GpuTensor, sign: 1 | -1): GpuTensor {
  const [, T, H, hd] = x.shape as [number, number, number, number];
  const y = emptyLike(x.ctx, x.shape);
  const n = x.size / 2;
  x.ctx.run(ropeKernel, { x, tab, y }, { n, T, H, half: hd / 2, sign }, grid(n, ROPE_GROUP));
  return y;
}

/** Apply RoPE to x [B, T, H, hd] (differentiable). */
export function rope(x: GpuTensor, opts: RopeOptions = {}): GpuTensor {
  if (x.rank !== 4)
    throw new Error(`webgpu rope: x must be [B, T, H, head_dim], got [${x.shape.join(",")}]`);
  const [, T, , hd] = x.shape as [number, number, number, number];
  const tab = ropeTable(x.ctx, hd, T, opts.theta ?? 10000, opts.offset ?? 0);
  const y = rotate(x, tab, 1);
  recordGpu("rope", [x], [y], ([g]) => [rotate(g!, tab, -1)]);
  return y;
}

/** Rotate a [B,T,Ha,hd] and b [B,T,Hb,hd] (same B, T, hd) by one dispatch. */
function rotatePair(a: GpuTensor, b: GpuTensor, tab: GpuTensor, sign: 1 | -1): GpuTensor[] {
  const [, T, Ha, hd] = a.shape as [number, number, number, number];
  const Hb = b.shape[2]!;
  const ya = emptyLike(a.ctx, a.shape);
  const yb = emptyLike(a.ctx, b.shape);
  const nA = a.size / 2;
  const n = nA + b.size / 2;
  a.ctx.run(
    ropePairKernel,
    { xa: a, xb: b, tab, ya, yb },
    { nA, n, T, Ha, Hb, half: hd / 2, sign },
    grid(n, ROPE_GROUP),
  );
  return [ya, yb];
}

/**
 * RoPE of attention's queries q [B, T, Hq, hd] and keys k [B, T, Hk, hd] together: the values
 * of `rope(q)` and `rope(k)`, one dispatch forward and one backward (differentiable).
 */
export function ropePair(
  q: GpuTensor,
  k: GpuTensor,
  opts: RopeOptions = {},
): [GpuTensor, GpuTensor] {
  const bad = (t: GpuTensor) => t.rank !== 4;
  if (
    bad(q) ||
    bad(k) ||
    q.shape[0] !== k.shape[0] ||
    q.shape[1] !== k.shape[1] ||
    q.shape[3] !== k.shape[3]
  )
    throw new Error(
      `webgpu ropePair: q and k must be [B, T, H, head_dim] with the same B, T and head_dim, got [${q.shape.join(",")}] and [${k.shape.join(",")}]`,
    );
  const [, T, , hd] = q.shape as [number, number, number, number];
  const tab = ropeTable(q.ctx, hd, T, opts.theta ?? 10000, opts.offset ?? 0);
  const [qr, kr] = rotatePair(q, k, tab, 1) as [GpuTensor, GpuTensor];
  recordGpu("ropePair", [q, k], [qr, kr], ([gq, gk]) => {
    if (gq && gk) return rotatePair(gq, gk, tab, -1);
    return [gq ? rotate(gq, tab, -1) : null, gk ? rotate(gk, tab, -1) : null];
  });
  return [qr, kr];
}

/**
 * RoPE of each x [B, T, H, hd] of `xs` (the contract's `rope`): two tensors — attention's q and
 * k — rotate by one dispatch each way (ropePair), any other count one dispatch per tensor.
 */
export function ropeEach(xs: readonly GpuTensor[], opts: RopeOptions = {}): GpuTensor[] {
  if (xs.length === 2) return ropePair(xs[0]!, xs[1]!, opts);
  return xs.map((x) => rope(x, opts));
}
