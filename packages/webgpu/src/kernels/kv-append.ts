/*
 * The write half of attention's decode step (docs/model.md §4; the CPU's `appendAndAttend`):
 * RoPE (rotate-half) of one token's q and k at position `pos`, and k, v stored at `pos` of the
 * token's cache row. Per input row b with state row s = rows[b] (hasRows = 1) or b, and
 * half = hd/2, c = cos a, sn = sin a, a = pos·θ_i read from tab [cap, half, 2] at row pos:
 *   qr[b,j,i] = q[i]·c − q[i+half]·sn,   qr[b,j,i+half] = q[i+half]·c + q[i]·sn   (j < Hq)
 *   kc[s,g,pos,·] = the same rotation of k[b,g,·],   vc[s,g,pos,·] = v[b,g,·]       (g < Hkv)
 * Shapes: q [B,Hq,hd] → qr [B,Hq,hd] (Hq = 0: no query, the write alone), k, v [B,Hkv,hd],
 * kc, vc [S,Hkv,cap,hd] (written in place), rows i32 [B]. One thread per pair (b, head, i), the
 * B·Hq query pairs first, then the B·Hkv key-value pairs. A state row outside 0..S−1 (the op
 * refuses those it can see) writes nothing rather than into another row.
 */
import { defineKernel, flatEntry } from "../kernel-def.js";

export const KV_APPEND_GROUP = 256;

export const kvAppendKernel = defineKernel({
  name: "kvAppend",
  params: {
    B: "u32",
    Hq: "u32",
    Hkv: "u32",
    half: "u32",
    S: "u32",
    cap: "u32",
    pos: "u32",
    hasRows: "u32",
  },
  buffers: {
    rows: "read:i32",
    q: "read",
    k: "read",
    v: "read",
    tab: "read",
    qr: "rw",
    kc: "rw",
    vc: "rw",
  },
  body: `
${flatEntry(KV_APPEND_GROUP, "p.B * (p.Hq + p.Hkv) * p.half")}
  let tb = (p.pos * p.half + i % p.half) * 2u;
  let c = tab[tb];
  let sn = tab[tb + 1u];
  let nq = p.B * p.Hq * p.half;
  if (i < nq) {
    let o = (i / p.half) * 2u * p.half + i % p.half;
    let x1 = q[o];
    let x2 = q[o + p.half];
    qr[o] = x1 * c - x2 * sn;
    qr[o + p.half] = x2 * c + x1 * sn;
    return;
  }
  let r = i - nq;
  let e = r % p.half;
  let bg = r / p.half;           // b·Hkv + g
  let b = bg / p.Hkv;
  let g = bg % p.Hkv;
  var s = b;
  if (p.hasRows != 0u) { s = u32(rows[b]); }
  if (s >= p.S) { return; }
  let o = bg * 2u * p.half + e;
  let co = ((s * p.Hkv + g) * p.cap + p.pos) * 2u * p.half + e;
  let x1 = k[o];
  let x2 = k[o + p.half];
  kc[co] = x1 * c - x2 * sn;
  kc[co + p.half] = x2 * c + x1 * sn;
  vc[co] = v[o];
  vc[co + p.half] = v[o + p.half];
}`,
});
