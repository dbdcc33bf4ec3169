/*
 * Rotary position embedding, rotate-half layout (docs/model.md §4), as @loop/attention's `rope`:
 *   x [B, T, H, hd] → y [B, T, H, hd], hd even, half = hd/2, one thread per pair (t, h, i < half):
 *     y[i]        = x[i]·cos a − x[i + half]·sign·sin a
 *     y[i + half] = x[i + half]·cos a + x[i]·sign·sin a
 *   sign = +1 rotates by a (forward), −1 by −a (the backward: the inverse rotation of ∂y).
 * tab [T, half, 2] holds (cos a, sin a) for a = (offset + t)·θ_i, computed on the CPU in float64
 * (ropeTables) and uploaded once per shape: p·θ_i in float32 would lose the angle at large p.
 * n = B·T·H·half pairs.
 */
import { defineKernel, flatEntry } from "../kernel-def.js";

export const ROPE_GROUP = 256;

export const ropeKernel = defineKernel({
  name: "rope",
  params: { n: "u32", T: "u32", H: "u32", half: "u32", sign: "f32" },
  buffers: { x: "read", tab: "read", y: "rw" },
  body: `
${flatEntry(ROPE_GROUP)}
  let e = i % p.half;
  let row = i / p.half;          // (b·T + t)·H + h
  let t = (row / p.H) % p.T;
  let tb = (t * p.half + e) * 2u;
  let c = tab[tb];
  let s = p.sign * tab[tb + 1u];
  let o = row * 2u * p.half + e;
  let x1 = x[o];
  let x2 = x[o + p.half];
  y[o] = x1 * c - x2 * s;
  y[o + p.half] = x2 * c + x1 * s;
}`,
});

/**
 * Two tensors rotated by one dispatch (attention's q [B,T,Hq,hd] and k [B,T,Hk,hd], same table):
 * threads [0, nA) take pairs of xa → ya with Ha heads, the rest pairs of xb → yb with Hb.
 */
export const ropePairKernel = defineKernel({
  name: "rope_pair",
  params: { nA: "u32", n: "u32", T: "u32", Ha: "u32", Hb: "u32", half: "u32", sign: "f32" },
  buffers: { xa: "read", xb: "read", tab: "read", ya: "rw", yb: "rw" },
  body: `
${flatEntry(ROPE_GROUP)}
  let inA = i < p.nA;
  var j = i;
  var H = p.Ha;
  if (!inA) { j = i - p.nA; H = p.Hb; }
  let e = j % p.half;
  let row = j / p.half;          // (b·T + t)·H + h
  let t = (row / H) % p.T;
  let tb = (t * p.half + e) * 2u;
  let c = tab[tb];
  let s = p.sign * tab[tb + 1u];
  let o = row * 2u * p.half + e;
  if (inA) {
    let x1 = xa[o];
    let x2 = xa[o + p.half];
    ya[o] = x1 * c - x2 * s;
    ya[o + p.half] = x2 * c + x1 * s;
  } else {
    let x1 = xb[o];
    let x2 = xb[o + p.half];
    yb[o] = x1 * c - x2 * s;
    yb[o + p.half] = x2 * c + x1 * s;
  }
}`,
});
