/*
 * The attention mixer's and the MLP's kernels of `AttentionOps` (@loop/tensor) on the CUDA
 * backend: RoPE (tables from @loop/tensor's `ropeTables`, uploaded once per shape; the backward
 * is the inverse rotation), causal GQA attention (kernels/attention.cu: one warp per query row,
 * online softmax, the logsumexp kept for the backward; packed documents through seqIdx) and
 * swiglu. Projected attention is written once over these (@loop/attention).
 */
import { type AttentionKernelOptions, type RopeOptions, ropeTables } from "@loop/tensor";
import type { CudaContext } from "../context.js";
import type { CudaTensor } from "../cuda-tensor.js";
import { ATTENTION_MAX_HEAD_DIM } from "../kernel-table.js";
import { record } from "../tape.js";
import { documents } from "./documents.js";
import { expect, expectShape } from "./shapes.js";

const tables = new WeakMap<CudaContext, Map<string, { cos: CudaTensor; sin: CudaTensor }>>();

export function ropeOn(ctx: CudaContext, hd: number, T: number, theta: number, offset: number) {
  let m = tables.get(ctx);
  if (!m) {
    m = new Map();
    tables.set(ctx, m);
  }
  const key = `${hd},${T},${theta},${offset}`;
  let t = m.get(key);
  if (!t) {
    const { cos, sin } = ropeTables(hd, T, theta, offset);
    const c = ctx.empty([T, hd / 2], "f32", true);
    const s = ctx.empty([T, hd / 2], "f32", true);
    ctx.device.upload(c.ptr, Float32Array.from(cos));
    ctx.device.upload(s.ptr, Float32Array.from(sin));
    t = { cos: c, sin: s };
    m.set(key, t);
  }
  return t;
}

/** RoPE of x [B, T, H, hd] (rotate-half), differentiable. */
export function rope(ctx: CudaContext, x: CudaTensor, theta: number, offset: number): CudaTensor {
  expect(x.shape.length === 4, `rope: x has shape [${x.shape}], expected [B,T,H,hd]`);
  const [B, T, H, hd] = x.shape as [number, number, number, number];
  const { cos, sin } = ropeOn(ctx, hd, T, theta, offset);
  const rows = B * T;
  const n = rows * H * (hd / 2);
  const y = ctx.empty(x.shape);
  ctx.run("rope", ctx.elems(n), [rows, H, hd, T, x, cos, sin, 1, y]);
  record(ctx, "rope", [x], [y], ([g]) => {
    const gx = ctx.empty(x.shape);
    ctx.run("rope", ctx.elems(n), [rows, H, hd, T, g!, cos, sin, -1, gx]);
    return [gx];
  });
  return y;
}

/** RoPE of each x [B, T, H, hd] of `xs` at positions offset..offset+T−1 (`AttentionOps.rope`). */
export function ropeAll(
  ctx: CudaContext,
  xs: readonly CudaTensor[],
  opts: RopeOptions = {},
): CudaTensor[] {
  return xs.map((x) => rope(ctx, x, opts.theta ?? 10000, opts.offset ?? 0));
}

const warps = (n: number) => ({
  grid: [Math.max(1, Math.ceil(n / 4)), 1, 1] as const,
  block: [128, 1, 1] as const,
  shared: 0,
});

/** Causal GQA attention of q [B,T,Hq,hd], k, v [B,T,Hkv,hd] → [B,T,Hq,hd]. */
export function attention(
  ctx: CudaContext,
  q: CudaTensor,
  k: CudaTensor,
  v: CudaTensor,
  opts: AttentionKernelOptions<CudaTensor> = {},
): CudaTensor {
  expect(q.shape.length === 4, `attention: q has shape [${q.shape}], expected [B,T,Hq,hd]`);
  const [B, T, Hq, hd] = q.shape as [number, number, number, number];
  expect(
    k.shape.length === 4 && k.shape[0] === B && k.shape[1] === T && k.shape[3] === hd,
    `attention: k has shape [${k.shape}], expected [${B},${T},Hkv,${hd}]`,
  );
  const Hkv = k.shape[2]!;
  const seqIdx = opts.seqIdx ?? null;
  expectShape("attention", "v", v, k.shape);
  expect(hd <= ATTENTION_MAX_HEAD_DIM, `attention: head_dim ${hd} > ${ATTENTION_MAX_HEAD_DIM}`);
  expect(Hq % Hkv === 0, `attention: ${Hq} query heads do not share ${Hkv} kv heads evenly`);
  const starts = seqIdx ? documents(ctx, seqIdx, B, T).starts : null;
  const o = ctx.empty(q.shape);
  const lse = ctx.empty([B, T, Hq]);
  ctx.run("attn_fwd", warps(B * T * Hq), [B, T, Hq, Hkv, hd, q, k, v, starts, o, lse]);
  record(ctx, "attention", [q, k, v], [o], ([g]) => {
    const Dv = ctx.empty([B, T, Hq]);
    const dq = ctx.empty(q.shape);
    ctx.run("attn_bwd_dq", warps(B * T * Hq), [
      B,
      T,
      Hq,
      Hkv,
      hd,
      q,
      k,
      v,
      o,
      g!,
      lse,
      starts,
      Dv,
      dq,
    ]);
    const dk = ctx.empty(k.shape);
    const dv = ctx.empty(v.shape);
    ctx.run("attn_bwd_dkv", warps(B * T * Hkv), [
      B,
      T,
      Hq,
      Hkv,
      hd,
      q,
      k,
      v,
      g!,
      lse,
      Dv,
      starts,
      dk,
      dv,
    ]);
    return [dq, dk, dv];
  });
  return o;
}

/** silu(gate) ⊙ up. */
export function swiglu(ctx: CudaContext, gate: CudaTensor, up: CudaTensor): CudaTensor {
  expectShape("swiglu", "up", up, gate.shape);
  const n = gate.size;
  const y = ctx.empty(gate.shape);
  ctx.run("swiglu_fwd", ctx.elems(n), [n, gate, up, y]);
  record(ctx, "swiglu", [gate, up], [y], ([g]) => {
    const gg = gate.requiresGrad ? ctx.empty(gate.shape) : null;
    const gu = up.requiresGrad ? ctx.empty(up.shape) : null;
    ctx.run("swiglu_bwd", ctx.elems(n), [n, g!, gate, up, gg, gu]);
    return [gg, gu];
  });
  return y;
}
