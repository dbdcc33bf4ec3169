/**
 * Packed documents in attention (AttentionOptions.seqIdx): a query sees only keys of its own
 * document, so a row packing several documents gives, forward and every gradient, what attending
 * over each document alone gives — tiled attention and the fused projected attention (with
 * RoPE: scores depend on relative positions only), portable and native; native 1 and 2 threads
 * bit-identical.
 */
import { backward, gradcheck, Tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { registerKernelSet } from "@loop/tensor/kernel";
import { buildNativeAddon } from "@loop/tensor/node";
import { documentSlice, nativeSuiteRuns } from "@loop/test-support";
import { afterEach, describe, expect, it } from "vitest";
import { attention } from "../attention.js";
import type { AttentionKernelSet } from "../native-kernel-sets.js";
import { projectedAttention } from "../projected-attention.js";
import { attentionNativeSource } from "./index.js";

type Addon = AttentionKernelSet & { setThreads: (n: number) => void };
const built = await buildNativeAddon<Addon>("attention", attentionNativeSource);

const T = 23;
/** Row 0: documents at 0, 4, 16 (small tiles of 8 put starts inside and on tile edges). */
const STARTS = [[0, 4, 16], [0, 1, 8], [0]];
const BATCH = STARTS.length;
const SEQ = Int32Array.from(
  STARTS.flatMap((s) => Array.from({ length: T }, (_, t) => s.filter((x) => x <= t).length - 1)),
);
const segments = STARTS.flatMap((s, b) =>
  s.map((t0, i) => ({ b, t0, t1: i + 1 < s.length ? s[i + 1]! : T })),
);
const opts = { blockQ: 8, blockK: 8 };

function relErr(a: Float32Array, b: Float32Array): number {
  let num = 0;
  let den = 1e-3;
  for (let i = 0; i < a.length; i++) {
    num = Math.max(num, Math.abs(a[i]! - b[i]!));
    den = Math.max(den, Math.abs(b[i]!));
  }
  return num / den;
}

const gy = (n: number) => randn([n], 77, { requiresGrad: false }).data;

/** Tiled attention: packed vs each document alone; returns [y, dq, dk, dv] of both. */
function tiled(): Float32Array[][] {
  const q = randn([BATCH, T, 4, 8], 1);
  const k = randn([BATCH, T, 2, 8], 2);
  const v = randn([BATCH, T, 2, 8], 3);
  const g = gy(q.size);
  const y = attention(q, k, v, { ...opts, seqIdx: SEQ });
  backward(y, [g]);
  const packed = [y.data.slice(), q.grad!.slice(), k.grad!.slice(), v.grad!.slice()];
  const sep = [q, q, k, v].map((t) => new Float32Array(t.size)); // y, dq, dk, dv
  for (const s of segments) {
    const [qs, ks, vs] = [q, k, v].map((t) => documentSlice(t, s.b, s.t0, s.t1)) as [
      Tensor,
      Tensor,
      Tensor,
    ];
    const ys = attention(qs, ks, vs, opts);
    const off = (t: Tensor) => (s.b * T + s.t0) * (t.size / (BATCH * T));
    backward(ys, [g.slice(off(q), off(q) + ys.size)]);
    sep[0]!.set(ys.data, off(q));
    sep[1]!.set(qs.grad!, off(q));
    sep[2]!.set(ks.grad!, off(k));
    sep[3]!.set(vs.grad!, off(v));
  }
  return [packed, sep];
}

/** Projected attention (one fused op with RoPE): packed vs each document alone. */
function projected(): Float32Array[][] {
  const D = 16;
  const u = randn([BATCH, T, D], 4);
  const [wq, wk, wv] = [randn([16, D], 5), randn([8, D], 6), randn([8, D], 7)];
  const po = { nHeads: 4, nKvHeads: 2, ...opts };
  const g = gy(BATCH * T * 16);
  const y = projectedAttention(u, wq, wk, wv, { ...po, seqIdx: SEQ });
  backward(y, [g]);
  const packed = [y.data.slice(), u.grad!.slice(), wq.grad!.slice(), wk.grad!.slice()];
  const sep = [
    new Float32Array(y.size),
    new Float32Array(u.size),
    new Float32Array(wq.size),
    new Float32Array(wk.size),
  ];
  for (const s of segments) {
    const us = documentSlice(u, s.b, s.t0, s.t1);
    const ws = [wq, wk, wv].map((w) => new Tensor(w.data.slice(), w.shape, true)) as [
      Tensor,
      Tensor,
      Tensor,
    ];
    const ys = projectedAttention(us, ws[0], ws[1], ws[2], po);
    const o = (s.b * T + s.t0) * 16;
    backward(ys, [g.slice(o, o + ys.size)]);
    sep[0]!.set(ys.data, o);
    sep[1]!.set(us.grad!, (s.b * T + s.t0) * D);
    ws[0].grad!.forEach((x, i) => {
      sep[2]![i]! += x;
    });
    ws[1].grad!.forEach((x, i) => {
      sep[3]![i]! += x;
    });
  }
  return [packed, sep];
}

function expectClose([packed, sep]: Float32Array[][], what: string, tol: number) {
  packed.forEach((p, i) => {
    expect(relErr(p, sep[i]!), `${what} output ${i}`).toBeLessThan(tol);
  });
}

describe("packed documents in attention (portable)", () => {
  it("equal attending over each document alone, forward and gradients", () => {
    expectClose(tiled(), "attention", 1e-5);
    expectClose(projected(), "projected attention", 1e-4);
  });
  it("finite differences agree across document boundaries", () => {
    const q = randn([BATCH, T, 2, 4], 11);
    const k = randn([BATCH, T, 1, 4], 12);
    const v = randn([BATCH, T, 1, 4], 13);
    gradcheck(() => attention(q, k, v, { ...opts, seqIdx: SEQ }), [q, k, v]);
  });
});

describe.runIf(nativeSuiteRuns("packed documents in attention (native)", built))(
  "packed documents in attention (native)",
  () => {
    const addon = (built as { addon: Addon }).addon;
    const use = (on: boolean) => registerKernelSet("attention", on ? addon : null);
    afterEach(() => {
      use(false);
      addon.setThreads(1);
    });
    it("equal each document alone; 1 and 2 threads bit-identical", () => {
      use(true);
      addon.setThreads(1);
      const one = [tiled(), projected()];
      expectClose(one[0]!, "attention", 1e-5);
      expectClose(one[1]!, "projected attention", 1e-4);
      addon.setThreads(2);
      const two = [tiled(), projected()];
      two.forEach((r, i) => {
        r[0]!.forEach((v, j) => {
          expect(v, `${i}/${j}`).toEqual(one[i]![0]![j]);
        });
      });
    });
  },
);
