/*
 * The CPU's attention decode kernel as a `DecodeOps` slice (@loop/tensor): `attendStep` on CPU
 * tensors over a cache [S, Hkv, capacity, hd] held in tensors. One token per input row j at
 * `position` (state row s = rows[j], or j):
 *   q, k ← RoPE at position (rope.ts);  kc[s, g, position] = k[j, g], vc likewise;
 *   out[j, h] = Σ_{t ≤ position} softmax_t(q[j,h]·kc[s,g,t]/√hd)·vc[s,g,t],  g = h / (Hq/Hkv)
 * with the scores and sums in double and `fastExp`: attend-row.ts, which the CPU's own decoding
 * (kv-cache.ts `appendAndAttend`) runs too. Inference only: nothing is recorded.
 */
import { type DecodeOps, type IntTensor, Tensor } from "@loop/tensor";
import { attendRow } from "./attend-row.js";
import { ropeInPlace } from "./rope.js";

function fail(message: string): never {
  throw new Error(`attendStep: ${message}`);
}

/** `DecodeOps.attendStep` on CPU tensors (see decode-ops.ts of @loop/tensor). */
export const cpuAttendStep: Pick<DecodeOps<Tensor, IntTensor>, "attendStep"> = {
  attendStep(cache, q, k, v, position, opts) {
    if (cache.k.shape.length !== 4)
      fail(`cache.k has shape [${cache.k.shape}], expected [S,Hkv,cap,hd]`);
    const [S, Hkv, cap, hd] = cache.k.shape as [number, number, number, number];
    if (cache.v.shape.join() !== cache.k.shape.join())
      fail(`cache.v has shape [${cache.v.shape}], expected [${cache.k.shape}]`);
    const n = k.shape[0]!;
    for (const [name, t] of [
      ["k", k],
      ["v", v],
    ] as const)
      if (t.shape.length !== 3 || t.shape[0] !== n || t.shape[1] !== Hkv || t.shape[2] !== hd)
        fail(`${name} has shape [${t.shape}], expected [${n},${Hkv},${hd}]`);
    if (q && (q.shape.length !== 3 || q.shape[0] !== n || q.shape[2] !== hd))
      fail(`q has shape [${q.shape}], expected [${n},Hq,${hd}]`);
    const Hq = q?.shape[1] ?? Hkv;
    if (Hq % Hkv !== 0) fail(`${Hkv} KV heads do not divide ${Hq} query heads`);
    if (!Number.isInteger(position) || position < 0 || position >= cap)
      fail(`position ${position} is outside the cache's capacity ${cap}`);
    const rows = opts.rows?.data ?? null;
    if (rows) {
      if (rows.length !== n || new Set(rows).size !== n || rows.some((s) => s < 0 || s >= S))
        fail(`rows must be ${n} distinct state rows of 0..${S - 1}`);
    } else if (S !== n) fail(`the state holds ${S} rows, the input ${n} (pass rows to pick)`);
    const kr = k.data.slice();
    ropeInPlace(kr, [n, 1, Hkv, hd], opts.theta, position);
    const kc = cache.k.data;
    const vc = cache.v.data;
    for (let j = 0; j < n; j++) {
      const s = rows ? rows[j]! : j;
      for (let g = 0; g < Hkv; g++) {
        const src = (j * Hkv + g) * hd;
        const dst = ((s * Hkv + g) * cap + position) * hd;
        kc.set(kr.subarray(src, src + hd), dst);
        vc.set(v.data.subarray(src, src + hd), dst);
      }
    }
    if (!q) return null;
    const qr = q.data.slice();
    ropeInPlace(qr, [n, 1, Hq, hd], opts.theta, position);
    const out = new Float32Array(n * Hq * hd);
    const group = Hq / Hkv;
    const len = position + 1;
    const scratch = { scores: new Float64Array(len), acc: new Float64Array(hd) };
    for (let j = 0; j < n; j++) {
      const s = rows ? rows[j]! : j;
      for (let h = 0; h < Hq; h++) {
        const base = (s * Hkv + Math.floor(h / group)) * cap * hd;
        attendRow(qr, (j * Hq + h) * hd, kc, vc, base, len, hd, scratch, out);
      }
    }
    return new Tensor(out, [n, Hq, hd]);
  },
};
