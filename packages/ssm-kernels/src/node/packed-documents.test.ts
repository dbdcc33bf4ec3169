/**
 * Packed documents (mamba_ssm's seq_idx): a row holding several documents must give, position
 * for position, what running each document on its own gives — forward and every gradient — for
 * the causal conv1d (plain and fused with silu + split) and the chunked SSD scan, on the portable
 * kernels and (where a compiler exists) the native ones, whose 1 and 2 threads agree bit for bit.
 */
import { backward, gradcheck, Rng, Tensor, withScratch } from "@loop/tensor";
import { randn, randu } from "@loop/tensor/internal";
import { documentResets, registerKernelSet } from "@loop/tensor/kernel";
import { buildNativeAddon } from "@loop/tensor/node";
import { documentSlice, nativeSuiteRuns } from "@loop/test-support";
import { afterEach, describe, expect, it } from "vitest";
import { causalConv1d } from "../causal-conv1d.js";
import { causalConv1dSiluSplit } from "../conv-silu-split.js";
import { relErr } from "../helpers.test-util.js";
import type { SsdKernelSet, SsmKernelSet } from "../native-kernel-sets.js";
import { ssdScanChunked } from "../ssd-scan-chunked.js";
import { ssmNativeSource } from "./index.js";

type Threaded = { setThreads: (n: number) => void };
const ssm = await buildNativeAddon<SsmKernelSet & Threaded>("ssm", ssmNativeSource("ssm"));
const ssd = await buildNativeAddon<SsdKernelSet & Threaded>("ssd", ssmNativeSource("ssd"));

/** Document boundaries of each row: row 0 has three documents (a start mid-chunk and one on a
 * chunk boundary of 8), row 1 a one-token document first, row 2 a single document. */
const T = 29;
const STARTS = [[0, 5, 16], [0, 1, 11], [0]];
const SEQ = Int32Array.from(
  STARTS.flatMap((s) =>
    Array.from({ length: T }, (_, t) => s.filter((x) => x <= t).length - 1 + 10),
  ),
);
const BATCH = STARTS.length;
const segments = STARTS.flatMap((s, b) =>
  s.map((t0, i) => ({ b, t0, t1: i + 1 < s.length ? s[i + 1]! : T, first: i === 0 })),
);

/** Write a [1,len,...] slice's values back into a [B,T,...] array. */
function place(dst: Float32Array, src: Float32Array, b: number, t0: number, inner: number): void {
  dst.set(src, (b * T + t0) * inner);
}

function seeds(n: number, seed: number): Float32Array {
  return new Rng(seed).fillUniform(new Float32Array(n), -1, 1);
}

const grads = (ts: readonly Tensor[]) => ts.map((t) => Float32Array.from(t.grad!));

describe("documentResets", () => {
  it("marks every position where the document index changes, never position 0", () => {
    const r = documentResets(Int32Array.from([3, 3, 4, 4, 4, 0, 1, 1, 2, 2]), 2, 5);
    expect(Array.from(r)).toEqual([0, 0, 1, 0, 0, 0, 1, 0, 1, 0]);
    // a new row starts afresh: no reset at its position 0 whatever the previous row held
  });
  it("names a wrong length or a decreasing index", () => {
    expect(() => documentResets(new Int32Array(3), 2, 2)).toThrow(/\[2,2\] = 4 values, got 3/);
    expect(() => documentResets(Int32Array.from([0, 1, 0]), 1, 3)).toThrow(
      /must not decrease along a row, got 1 then 0 at \[0,2\]/,
    );
  });
});

/** The conv cases: plain conv1d (with an initial state) and the fused conv + silu + split. */
function convPacked(fused: boolean, x: Tensor, w: Tensor, bias: Tensor, init: Tensor) {
  for (const t of [x, w, bias, init]) t.grad = null;
  const C = x.shape[2]!;
  const ys = fused
    ? causalConv1dSiluSplit(x, w, bias, init, [C - 3, 3], SEQ)
    : [causalConv1d(x, w, bias, init, SEQ)];
  const gy = ys.map((y, i) => seeds(y.size, 70 + i));
  backward(ys, gy);
  return { ys: ys.map((y) => Float32Array.from(y.data)), gy, g: grads([x, w, bias, init]) };
}

function convSeparate(
  fused: boolean,
  x: Tensor,
  w: Tensor,
  bias: Tensor,
  init: Tensor,
  gyAll: Float32Array[],
) {
  const C = x.shape[2]!;
  const widths = fused ? [C - 3, 3] : [C];
  const ys = widths.map((wd) => new Float32Array(BATCH * T * wd));
  const gx = new Float32Array(x.size);
  const gw = new Float64Array(w.size);
  const gb = new Float64Array(C);
  const gi = new Float32Array(init.size);
  const K = w.shape[w.rank - 1]!;
  for (const s of segments) {
    const xs = documentSlice(x, s.b, s.t0, s.t1);
    const ws = new Tensor(w.data.slice(), w.shape, true);
    const bs = new Tensor(bias.data.slice(), bias.shape, true);
    const is = s.first
      ? new Tensor(init.data.slice(s.b * C * (K - 1), (s.b + 1) * C * (K - 1)), [1, C, K - 1], true)
      : null;
    const outs = fused
      ? causalConv1dSiluSplit(xs, ws, bs, is, widths)
      : [causalConv1d(xs, ws, bs, is)];
    const gys = outs.map((_, p) =>
      gyAll[p]!.slice((s.b * T + s.t0) * widths[p]!, (s.b * T + s.t1) * widths[p]!),
    );
    backward(outs, gys);
    outs.forEach((o, p) => {
      place(ys[p]!, o.data, s.b, s.t0, widths[p]!);
    });
    place(gx, xs.grad!, s.b, s.t0, C);
    ws.grad!.forEach((v, i) => {
      gw[i]! += v;
    });
    bs.grad!.forEach((v, i) => {
      gb[i]! += v;
    });
    if (is) gi.set(is.grad!, s.b * C * (K - 1));
  }
  return { ys, g: [gx, Float32Array.from(gw), Float32Array.from(gb), gi] };
}

function scanPacked(inp: Tensor[], s0: Tensor) {
  const [x, dt, A, B, C] = inp as [Tensor, Tensor, Tensor, Tensor, Tensor];
  for (const t of [...inp, s0]) t.grad = null;
  const { y, state } = ssdScanChunked(x, dt, A, B, C, {
    initialState: s0,
    chunkSize: 8,
    seqIdx: SEQ,
  });
  const gy = seeds(y.size, 81);
  const gs = seeds(state.size, 82);
  backward([y, state], [gy, gs]);
  return {
    out: [Float32Array.from(y.data), Float32Array.from(state.data)],
    gy,
    gs,
    g: grads([...inp, s0]),
  };
}

function scanSeparate(inp: Tensor[], s0: Tensor, gy: Float32Array, gs: Float32Array) {
  const [x, dt, A, B, C] = inp as [Tensor, Tensor, Tensor, Tensor, Tensor];
  const [H, P] = [x.shape[2]!, x.shape[3]!];
  const [G, N] = [B.shape[2]!, B.shape[3]!];
  const y = new Float32Array(x.size);
  const state = new Float32Array(s0.size);
  const g = [x, dt, A, B, C, s0].map((t) => new Float32Array(t.size));
  const gA = new Float64Array(H);
  const PN = P * N;
  for (const s of segments) {
    const parts = [documentSlice(x, s.b, s.t0, s.t1), documentSlice(dt, s.b, s.t0, s.t1)];
    const As = new Tensor(A.data.slice(), A.shape, true);
    const Bs = documentSlice(B, s.b, s.t0, s.t1);
    const Cs = documentSlice(C, s.b, s.t0, s.t1);
    const init = s.first
      ? new Tensor(s0.data.slice(s.b * H * PN, (s.b + 1) * H * PN), [1, H, P, N], true)
      : null;
    const last = s.t1 === T;
    const r = ssdScanChunked(parts[0]!, parts[1]!, As, Bs, Cs, {
      initialState: init,
      chunkSize: 8,
    });
    const gys = gy.slice((s.b * T + s.t0) * H * P, (s.b * T + s.t1) * H * P);
    if (last) backward([r.y, r.state], [gys, gs.slice(s.b * H * PN, (s.b + 1) * H * PN)]);
    else backward(r.y, [gys]);
    place(y, r.y.data, s.b, s.t0, H * P);
    if (last) state.set(r.state.data, s.b * H * PN);
    place(g[0]!, parts[0]!.grad!, s.b, s.t0, H * P);
    place(g[1]!, parts[1]!.grad!, s.b, s.t0, H);
    As.grad!.forEach((v, i) => {
      gA[i]! += v;
    });
    place(g[3]!, Bs.grad!, s.b, s.t0, G * N);
    place(g[4]!, Cs.grad!, s.b, s.t0, G * N);
    if (init) g[5]!.set(init.grad!, s.b * H * PN);
  }
  g[2] = Float32Array.from(gA);
  return { out: [y, state], g };
}

const convInputs = (C: number, K: number) => ({
  x: randn([BATCH, T, C], 11),
  w: randn([C, 1, K], 12),
  bias: randn([C], 13),
  init: randn([BATCH, C, K - 1], 14),
});

const scanInputs = (H: number, P: number, G: number, N: number) => ({
  inp: [
    randn([BATCH, T, H, P], 21),
    randu([BATCH, T, H], 22, 0.01, 0.5),
    randu([H], 23, -3, -0.2),
    randn([BATCH, T, G, N], 24),
    randn([BATCH, T, G, N], 25),
  ],
  s0: randn([BATCH, H, P, N], 26),
});

function checkAll(tol: number) {
  for (const fused of [false, true]) {
    const { x, w, bias, init } = convInputs(7, 4);
    const p = convPacked(fused, x, w, bias, init);
    const q = convSeparate(fused, x, w, bias, init, p.gy);
    p.ys.forEach((y, i) => {
      expect(relErr(y, q.ys[i]!), `conv y (fused ${fused})`).toBeLessThan(tol);
    });
    p.g.forEach((g, i) => {
      expect(relErr(g, q.g[i]!), `conv grad ${i} (fused ${fused})`).toBeLessThan(tol);
    });
  }
  for (const G of [1, 2]) {
    const { inp, s0 } = scanInputs(4, 5, G, 6);
    const p = scanPacked(inp, s0);
    const q = scanSeparate(inp, s0, p.gy, p.gs);
    p.out.forEach((o, i) => {
      expect(relErr(o, q.out[i]!), `scan output ${i} (G=${G})`).toBeLessThan(tol);
    });
    p.g.forEach((g, i) => {
      expect(relErr(g, q.g[i]!), `scan grad ${i} (G=${G})`).toBeLessThan(tol);
    });
  }
}

describe("packed documents on the portable kernels", () => {
  it("conv1d, conv + silu + split and the SSD scan equal running each document alone", () => {
    withScratch(() => checkAll(2e-5));
  });

  it("finite differences agree with the gradients across document boundaries", () => {
    const { x, w, bias, init } = convInputs(3, 3);
    gradcheck(() => causalConv1d(x, w, bias, init, SEQ), [x, w, bias, init]);
    const { inp, s0 } = scanInputs(2, 3, 1, 4);
    gradcheck(() => {
      const [a, b, c, d, e] = inp as [Tensor, Tensor, Tensor, Tensor, Tensor];
      const r = ssdScanChunked(a, b, c, d, e, { initialState: s0, chunkSize: 8, seqIdx: SEQ });
      return [r.y, r.state];
    }, [...inp, s0]);
  });

  it("a document start cuts the state: the second document ignores everything before it", () => {
    const { inp, s0 } = scanInputs(2, 3, 1, 4);
    const [x, dt, A, B, C] = inp as [Tensor, Tensor, Tensor, Tensor, Tensor];
    const y0 = ssdScanChunked(x, dt, A, B, C, {
      initialState: s0,
      chunkSize: 8,
      seqIdx: SEQ,
    }).y.data.slice();
    // change row 0's first document (positions 0..4) and the initial state
    for (let i = 0; i < 5 * 2 * 3; i++) x.data[i]! += 1;
    s0.data.fill(3);
    const y1 = ssdScanChunked(x, dt, A, B, C, { initialState: s0, chunkSize: 8, seqIdx: SEQ }).y
      .data;
    expect(Array.from(y1.subarray(5 * 6, T * 6))).toEqual(Array.from(y0.subarray(5 * 6, T * 6)));
  });
});

describe.runIf(nativeSuiteRuns("packed documents on the native kernels", ssm, ssd))(
  "packed documents on the native kernels",
  () => {
    const ssmAddon = (ssm as { addon: SsmKernelSet & Threaded }).addon;
    const ssdAddon = (ssd as { addon: SsdKernelSet & Threaded }).addon;
    const addons = [ssmAddon, ssdAddon];
    const use = (on: boolean) => {
      registerKernelSet("ssm", on ? ssmAddon : null);
      registerKernelSet("ssd", on ? ssdAddon : null);
    };
    afterEach(() => {
      use(false);
      for (const a of addons) a.setThreads(1);
    });

    it("equal running each document alone; 1 and 2 threads bit-identical", () => {
      use(true);
      withScratch(() => checkAll(2e-5));
      const runAll = () => {
        const { x, w, bias, init } = convInputs(40, 4);
        const out = [
          convPacked(true, x, w, bias, init),
          convPacked(false, x, w, bias, init),
        ].flatMap((r) => [...r.ys, ...r.g]);
        const { inp, s0 } = scanInputs(4, 5, 2, 6);
        const s = scanPacked(inp, s0);
        return [...out, ...s.out, ...s.g];
      };
      for (const a of addons) a.setThreads(1);
      const one = withScratch(runAll);
      for (const a of addons) a.setThreads(2);
      const two = withScratch(runAll);
      two.forEach((v, i) => {
        expect(v, `output ${i}`).toEqual(one[i]);
      });
    });

    it("without seqIdx the calls are unchanged (the resets argument is optional)", () => {
      use(true);
      const { x, w, bias, init } = convInputs(7, 4);
      const a = causalConv1d(x, w, bias, init).data.slice();
      use(false);
      expect(relErr(a, causalConv1d(x, w, bias, init).data)).toBeLessThan(1e-6);
    });
  },
);
