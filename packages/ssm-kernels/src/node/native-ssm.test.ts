/**
 * native/ssm.c against the portable kernels it replaces: causal conv1d, gated RMSNorm,
 * softplusBias, addDSkip, forward and backward. Each case runs the portable loops (no native
 * kernel registered), then the same call with the addon registered on 1 and on 2 OpenMP threads;
 * native must match portable within the stated tolerance and 1- and 2-thread results must be
 * bitwise identical (rows are split across threads, reductions use fixed row blocks).
 */
import { backward, gradcheck, Rng, Tensor, withScratch } from "@loop/tensor";
import { allocF32Uninit, registerKernelSet } from "@loop/tensor/kernel";
import { buildNativeAddon } from "@loop/tensor/node";
import { itBuildsNativeAddon, nativeSuiteRuns } from "@loop/test-support";
import { afterAll, describe, expect, it } from "vitest";
import {
  type ConvShape,
  causalConv1d,
  causalConv1dBackward,
  causalConv1dForward,
} from "../causal-conv1d.js";
import { causalConv1dSiluSplit } from "../conv-silu-split.js";
import { gatedRmsnormBackward, gatedRmsnormForward } from "../gated-rmsnorm.js";
import { relErr } from "../helpers.test-util.js";
import type { Mamba2Config } from "../mamba2-config.js";
import { Mamba2Mixer } from "../mamba2-mixer.js";
import { addDSkip, softplusBias } from "../mamba2-ops.js";
import type { SsmKernelSet } from "../native-kernel-sets.js";
import { ssmNativeSource } from "./index.js";

type F = Float32Array;
type N = Float32Array | null;
interface SsmAddon {
  setThreads: (n: number) => void;
  convFwd: (B: number, T: number, C: number, K: number, x: F, w: F, b: N, i: N, y: F) => void;
  softplusFwd: (raw: F, bias: F, y: F, rows: number, H: number, lo: number, hi: number) => void;
  [name: string]: (...args: never[]) => void;
}

const built = await buildNativeAddon<SsmAddon>("ssm", ssmNativeSource("ssm"));

/** Deterministic values in about [−scale, scale] (a hash, not a sine: no structure to hide bugs). */
function data(n: number, seed: number, scale = 1, shift = 0): Float32Array {
  const out = new Float32Array(n);
  let s = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out[i] = shift + scale * (2 * (s / 4294967296) - 1);
  }
  return out;
}

/** Bitwise equality of two float arrays (fast: toEqual walks large typed arrays slowly). */
function sameBits(a: N, b: N): boolean {
  if (a === null || b === null) return a === b;
  return (
    Buffer.compare(
      new Uint8Array(a.buffer, a.byteOffset, a.byteLength),
      new Uint8Array(b.buffer, b.byteOffset, b.byteLength),
    ) === 0
  );
}

/** max over i of |a[i] − b[i]| / |b[i]| (0/0 counts as 0). */
function maxElemRel(a: F, b: F): number {
  let worst = 0;
  for (let i = 0; i < b.length; i++) {
    const d = Math.abs(a[i]! - b[i]!);
    if (d > 0) worst = Math.max(worst, d / Math.abs(b[i]!));
  }
  return worst;
}

describe("ssm native addon", () => {
  itBuildsNativeAddon("ssm", built);
});

describe.runIf(nativeSuiteRuns("native ssm kernels", built))(
  "native ssm kernels match the portable ones",
  () => {
    const addon = (built as { addon: SsmAddon }).addon;
    const fns = addon as unknown as SsmKernelSet;
    afterAll(() => {
      registerKernelSet("ssm", null);
      addon.setThreads(1);
    });

    /**
     * f inside a scratch scope whose pool holds NaN-filled buffers (the native paths take their
     * outputs unzeroed from the pool, so an element a kernel fails to write shows as NaN); the
     * returned arrays are copied out before the scope ends.
     */
    function scoped(f: () => Record<string, N>): Record<string, N> {
      withScratch(() => {
        for (let b = 10; b <= 19; b++)
          for (let i = 0; i < 8; i++) allocF32Uninit(2 ** b).fill(Number.NaN);
      });
      return withScratch(() => {
        const out: Record<string, N> = {};
        for (const [k, v] of Object.entries(f())) out[k] = v ? Float32Array.from(v) : null;
        return out;
      });
    }

    type Arrays = Record<string, N>;
    /** f with the portable loops, and with the native kernels on 1 and 2 threads. */
    function run(f: () => Arrays): { ref: Arrays; one: Arrays; two: Arrays } {
      registerKernelSet("ssm", null);
      const ref = scoped(f);
      registerKernelSet("ssm", fns);
      try {
        addon.setThreads(1);
        const one = scoped(f);
        addon.setThreads(2);
        const two = scoped(f);
        return { ref, one, two };
      } finally {
        registerKernelSet("ssm", null);
        addon.setThreads(1);
      }
    }

    /** Compare named arrays: native within `tol` (relErr) of portable, 1 and 2 threads equal. */
    function check(
      r: { ref: Arrays; one: Arrays; two: Arrays },
      tol: Record<string, number>,
      label: string,
    ): void {
      for (const [k, want] of Object.entries(r.ref)) {
        const one = r.one[k] ?? null;
        const two = r.two[k] ?? null;
        if (want === null) {
          expect(one, `${label} ${k}`).toBeNull();
          expect(two, `${label} ${k}`).toBeNull();
          continue;
        }
        expect(one, `${label} ${k}`).not.toBeNull();
        expect(relErr(one!, want), `${label} ${k}`).toBeLessThanOrEqual(tol[k] ?? 0);
        expect(sameBits(two, one), `${label} ${k} (2 threads vs 1)`).toBe(true);
      }
    }

    /** Gradients of leaves after backward(f(), [seed]) (leaves reset first), plus the output. */
    function withGrads(f: () => Tensor, leaves: Record<string, Tensor>, seed: F) {
      return () => {
        for (const t of Object.values(leaves)) t.grad = null;
        const y = f();
        const out: Record<string, N> = { y: Float32Array.from(y.data) };
        backward(y, [seed]);
        for (const [k, t] of Object.entries(leaves))
          out[`g${k}`] = t.grad ? Float32Array.from(t.grad) : null;
        return out;
      };
    }

    // [B, T, C, K]: single element, K = 1, T < K − 1, odd channel counts, one large enough for
    // both threads (B·T·C·K ≥ 32768), the 1⊗12 benchmark's conv (C = 160, K = 4)
    const convShapes: [number, number, number, number][] = [
      [1, 1, 1, 1],
      [1, 5, 3, 4],
      [2, 2, 9, 5],
      [2, 7, 17, 4],
      [3, 33, 45, 3],
      [2, 19, 130, 1],
      [3, 70, 33, 4],
      [4, 150, 160, 4],
      [2, 30, 40, 6], // K above the widths whose weight sums stay in registers
      [2, 9000, 5, 3], // over 256 blocks of 64 rows: larger reduction blocks
    ];

    it("causal conv1d forward and backward, with and without bias and initial state", () => {
      for (const [B, T, C, K] of convShapes) {
        const s: ConvShape = { batch: B, seqLen: T, channels: C, width: K };
        const x = data(B * T * C, 1 + C);
        const w = data(C * K, 2 + K, 0.5);
        const gy = data(B * T * C, 3 + T);
        for (const withBias of [true, false])
          for (const withInit of [false, true]) {
            const bias = withBias ? data(C, 4) : null;
            const init = withInit ? data(B * C * (K - 1), 5, 2) : null;
            const label = `conv [${B},${T},${C},K=${K}] bias=${withBias} init=${withInit}`;
            check(
              run(() => ({ y: causalConv1dForward(s, x, w, bias, init) })),
              { y: 2e-6 },
              label,
            );
            for (const needs of [
              { x: true, weight: true, bias: withBias, init: withInit },
              { x: true, weight: false, bias: false, init: false },
              { x: false, weight: true, bias: false, init: withInit },
              { x: false, weight: false, bias: true, init: false },
            ]) {
              const r = run(() => {
                const g = causalConv1dBackward(s, x, w, init, gy, needs);
                return { x: g.x, weight: g.weight, bias: g.bias, init: g.init };
              });
              check(
                r,
                { x: 2e-6, weight: 1e-6, bias: 1e-6, init: 2e-6 },
                `${label} ${JSON.stringify(needs)}`,
              );
            }
          }
      }
    });

    it("causalConv1d (the differentiable op) routes forward and backward to the native kernels", () => {
      const [B, T, C, K] = [2, 40, 24, 4];
      const x = new Tensor(data(B * T * C, 11), [B, T, C], true);
      const w = new Tensor(data(C * K, 12, 0.5), [C, 1, K], true);
      const b = new Tensor(data(C, 13), [C], true);
      const init = new Tensor(data(B * C * (K - 1), 14), [B, C, K - 1], true);
      const seed = data(B * T * C, 15);
      const f = withGrads(() => causalConv1d(x, w, b, init), { x, w, b, init }, seed);
      check(run(f), { y: 2e-6, gx: 2e-6, gw: 1e-6, gb: 1e-6, ginit: 2e-6 }, "causalConv1d");
    });

    // [B, T, C, K, widths]: Mamba-2's three pieces, one piece, four with an empty one, T < K − 1,
    // sizes past the thread threshold, and over 256 blocks (halo rows cross every block boundary)
    const convSiluCases: [number, number, number, number, number[]][] = [
      [2, 40, 24, 4, [16, 4, 4]],
      [1, 2, 5, 4, [5]],
      [3, 70, 33, 3, [10, 0, 20, 3]],
      [4, 150, 160, 4, [128, 16, 16]],
      [2, 9000, 6, 3, [2, 2, 2]],
    ];

    it("causalConv1dSiluSplit (one pass) equals conv1d, silu and split, with and without bias and state", () => {
      for (const [B, T, C, K, widths] of convSiluCases)
        for (const withBias of [true, false])
          for (const withInit of [false, true])
            for (const skip of [-1, 0]) {
              // skip: a piece whose output feeds nothing (its gradient is null)
              const x = new Tensor(data(B * T * C, 31 + C), [B, T, C], true);
              const w = new Tensor(data(C * K, 32 + K, 0.5), [C, 1, K], true);
              const b = withBias ? new Tensor(data(C, 33), [C], true) : null;
              const init = withInit
                ? new Tensor(data(B * C * (K - 1), 34, 2), [B, C, K - 1], true)
                : null;
              const seeds = widths.map((wd, p) => data(B * T * wd, 35 + p));
              const r = run(() => {
                for (const t of [x, w, b, init]) if (t) t.grad = null;
                const ys = causalConv1dSiluSplit(x, w, b, init, widths);
                const used = ys.map((_, p) => p).filter((p) => p !== skip);
                backward(
                  used.map((p) => ys[p]!),
                  used.map((p) => seeds[p]!),
                );
                const out: Arrays = { gx: x.grad, gw: w.grad, gb: b?.grad ?? null };
                out.ginit = init?.grad ?? null;
                ys.forEach((y, p) => {
                  out[`y${p}`] = y.data;
                });
                return out;
              });
              const label = `convSilu [${B},${T},${C},K=${K}] [${widths}] bias=${withBias} init=${withInit} skip=${skip}`;
              check(
                r,
                {
                  y0: 2e-6,
                  y1: 2e-6,
                  y2: 2e-6,
                  y3: 2e-6,
                  gx: 2e-6,
                  gw: 1e-6,
                  gb: 1e-6,
                  ginit: 2e-6,
                },
                label,
              );
            }
    });

    it("causalConv1dSiluSplit on the native kernels passes a finite-difference gradient check", () => {
      registerKernelSet("ssm", fns);
      try {
        const x = new Tensor(data(2 * 5 * 6, 41), [2, 5, 6], true);
        const w = new Tensor(data(6 * 3, 42), [6, 1, 3], true);
        const b = new Tensor(data(6, 43), [6], true);
        const init = new Tensor(data(2 * 6 * 2, 44), [2, 6, 2], true);
        gradcheck(() => causalConv1dSiluSplit(x, w, b, init, [3, 2, 1]), [x, w, b, init]);
      } finally {
        registerKernelSet("ssm", null);
      }
    });

    it("softplusBias with a dt limit on the native kernels passes a finite-difference gradient check", () => {
      registerKernelSet("ssm", fns);
      try {
        const raw = new Tensor(data(3 * 8, 45, 3), [3, 8], true);
        const bias = new Tensor(data(8, 46), [8], true);
        // (no element within the finite-difference step of a limit, where the clamp has a kink)
        gradcheck(() => softplusBias(raw, bias, [0.3, 1.5]), [raw, bias]);
      } finally {
        registerKernelSet("ssm", null);
      }
    });

    it("convSiluFwd rejects pieces that do not cover the channels", () => {
      const x = data(2 * 3 * 4, 1);
      const w = data(4 * 2, 2);
      const y = new Float32Array(24);
      const f = fns.convSiluFwd as (...a: unknown[]) => void;
      expect(() => f(2, 3, 4, 2, x, w, null, null, 2, 3, 0, 0, 0, y, y, null, null)).toThrow(
        /convSiluFwd: 1 to 4 pieces whose widths sum to C = 4/,
      );
      expect(() => f(2, 3, 4, 2, x, w, null, null, 5, 1, 1, 1, 1, y, y, y, y)).toThrow(
        /convSiluFwd: 1 to 4 pieces/,
      );
    });

    // [rows, Di, G]: tiny, odd group sizes, several groups, sizes past the thread threshold
    const normShapes: [number, number, number][] = [
      [1, 1, 1],
      [3, 5, 1],
      [7, 24, 3],
      [65, 130, 2],
      [130, 48, 4],
      [2000, 128, 1],
      [300, 640, 8],
      [257, 135, 5],
      [17000, 12, 2], // over 256 blocks of 64 rows: larger reduction blocks
    ];

    it("gated RMSNorm forward (rinv kept or not) and backward", () => {
      for (const [rows, Di, G] of normShapes) {
        const n = rows * Di;
        const x = data(n, 21 + Di);
        const z = data(n, 22 + G, 3);
        const w = data(Di, 23, 0.5, 1);
        const gy = data(n, 24 + rows);
        const label = `rmsnorm [${rows},${Di}] G=${G}`;
        const eps = 1e-5;
        const fwd = run(() => {
          const rinv = new Float32Array(rows * G);
          const y = gatedRmsnormForward(x, z, w, rows, Di, G, eps, rinv);
          return { y, rinv, yNoRinv: gatedRmsnormForward(x, z, w, rows, Di, G, eps) };
        });
        check(fwd, { y: 2e-6, rinv: 1e-6, yNoRinv: 2e-6 }, label);
        expect(sameBits(fwd.one.yNoRinv, fwd.one.y)).toBe(true);
        const rinv = fwd.ref.rinv!;
        for (const needs of [
          { x: true, z: true, weight: true },
          { x: true, z: false, weight: false },
          { x: false, z: true, weight: false },
          { x: false, z: false, weight: true },
        ]) {
          const r = run(() => {
            const g = gatedRmsnormBackward(x, z, w, rows, Di, G, rinv, gy, needs);
            return { x: g.x, z: g.z, weight: g.weight };
          });
          check(r, { x: 1e-5, z: 1e-5, weight: 2e-6 }, `${label} ${JSON.stringify(needs)}`);
        }
      }
    });

    it("gated RMSNorm writes into a caller's output array", () => {
      const [rows, Di, G] = [9, 20, 2];
      const x = data(rows * Di, 31);
      const z = data(rows * Di, 32);
      const w = data(Di, 33, 0.2, 1);
      const r = run(() => {
        const out = new Float32Array(rows * Di).fill(Number.NaN);
        const y = gatedRmsnormForward(x, z, w, rows, Di, G, 1e-5, null, out);
        expect(y).toBe(out);
        return { y };
      });
      check(r, { y: 2e-6 }, "rmsnorm out");
    });

    it("softplus is within float32 rounding of the exact value over a dense sweep (log1p)", () => {
      // v = raw + bias from −110 to 110 in steps of ~0.0037: e^{−|v|} covers (0, 1] down to the
      // float32 denormals; the exact softplus is computed in double here (Math.log1p, Math.exp).
      const n = 60_001;
      const raw = new Tensor(
        Float32Array.from({ length: n }, (_, i) => -110 + (220 * i) / (n - 1)),
        [n, 1],
      );
      const bias = new Tensor(Float32Array.of(0.0123), [1]);
      const r = run(() => ({ y: Float32Array.from(softplusBias(raw, bias).data) }));
      check(r, { y: 2e-7 }, "softplus sweep");
      let worst = 0;
      for (let i = 0; i < n; i++) {
        const v = raw.data[i]! + bias.data[0]!;
        const exact = Math.max(v, 0) + Math.log1p(Math.exp(-Math.abs(v)));
        const f = Math.fround(exact);
        const ulp = f === 0 ? 2 ** -149 : Math.max(2 ** -149, 2 ** (Math.floor(Math.log2(f)) - 23));
        worst = Math.max(worst, Math.abs(r.one.y![i]! - exact) / ulp);
      }
      expect(worst).toBeLessThanOrEqual(0.501);
    });

    it("softplusBias forward and backward, with and without the bias gradient", () => {
      for (const [rows, H] of [
        [1, 1],
        [3, 4],
        [37, 7],
        [4096, 8],
        [1000, 33],
        [20000, 2],
      ] as const) {
        const rawData = data(rows * H, 41 + H, 12);
        const seed = data(rows * H, 43);
        for (const biasGrad of [true, false]) {
          const raw = new Tensor(rawData, [rows, H], true);
          const bias = new Tensor(data(H, 42, 3), [H], biasGrad);
          const f = withGrads(() => softplusBias(raw, bias), { raw, bias }, seed);
          const r = run(f);
          check(r, { y: 2e-7, graw: 2e-7, gbias: 1e-6 }, `softplusBias [${rows},${H}] ${biasGrad}`);
          // elementwise: both round a double result once (at most one float32 ulp apart)
          expect(maxElemRel(r.one.y!, r.ref.y!)).toBeLessThanOrEqual(1.2e-7);
          expect(maxElemRel(r.one.graw!, r.ref.graw!)).toBeLessThanOrEqual(1.2e-7);
        }
      }
    });

    it("softplusBias with a dt limit: clamped values, zero gradient outside, native = portable", () => {
      const [rows, H] = [3000, 5];
      const rawData = data(rows * H, 71, 6);
      const seed = data(rows * H, 72);
      const limit = [0.05, 2] as const;
      for (const biasGrad of [true, false]) {
        const raw = new Tensor(rawData, [rows, H], true);
        const bias = new Tensor(data(H, 73, 1), [H], biasGrad);
        const f = withGrads(() => softplusBias(raw, bias, limit), { raw, bias }, seed);
        const r = run(f);
        check(r, { y: 2e-7, graw: 2e-7, gbias: 1e-6 }, `clamped softplusBias ${biasGrad}`);
        const [lo, hi] = [Math.fround(limit[0]), Math.fround(limit[1])];
        let inside = 0;
        let outside = 0;
        for (let i = 0; i < rows * H; i++) {
          const sp = Math.fround(
            Math.log1p(Math.exp(-Math.abs(rawData[i]! + bias.data[i % H]!))) +
              Math.max(rawData[i]! + bias.data[i % H]!, 0),
          );
          const y = r.one.y![i]!;
          expect(y).toBeGreaterThanOrEqual(lo);
          expect(y).toBeLessThanOrEqual(hi);
          // (away from the limits, where a rounding could move the element across)
          if (sp < lo * 0.999 || sp > hi * 1.001) {
            outside++;
            expect(r.one.graw![i]).toBe(0);
            expect(r.ref.graw![i]).toBe(0);
          } else if (sp > lo * 1.001 && sp < hi * 0.999) {
            inside++;
            expect(r.one.graw![i]).not.toBe(0);
          }
        }
        expect(inside).toBeGreaterThan(1000);
        expect(outside).toBeGreaterThan(1000);
      }
    });

    it("addDSkip forward and backward; ∂y is the incoming gradient", () => {
      for (const [rows, H, P] of [
        [1, 1, 1],
        [6, 4, 5],
        [50, 6, 33],
        [2048, 8, 16],
        [300, 5, 64],
        [17000, 3, 2],
      ] as const) {
        const n = rows * H * P;
        const seed = data(n, 51 + P);
        for (const needs of [
          [true, true, true],
          [false, true, false],
          [true, false, true],
        ]) {
          const y = new Tensor(data(n, 52), [rows, H, P], needs[0]);
          const x = new Tensor(data(n, 53, 2), [rows, H, P], needs[1]);
          const d = new Tensor(data(H, 54, 1, 0.5), [H], needs[2]);
          const f = withGrads(() => addDSkip(y, x, d), { y, x, d }, seed);
          const r = run(f);
          check(r, { y: 2e-7, gy: 0, gx: 0, gd: 1e-6 }, `addDSkip [${rows},${H},${P}] ${needs}`);
        }
      }
    });

    it("a Mamba-2 mixer prefill (with a conv state) gives the same output and gradients", () => {
      const cfg: Mamba2Config = {
        dModel: 12,
        dState: 4,
        headdim: 6,
        expand: 2,
        nGroups: 2,
        dConv: 4,
        chunkSize: 8,
        normEps: 1e-5,
      };
      const m = new Mamba2Mixer(cfg, { rng: new Rng(61), nLayers: 2 });
      const rng = new Rng(62);
      for (const t of [m.d, m.normWeight, m.convBias, m.dtBias])
        for (let i = 0; i < t.size; i++) t.data[i] = t.data[i]! + rng.uniformIn(-0.5, 0.5);
      const [B, T] = [3, 21];
      const u = new Tensor(data(B * T * cfg.dModel, 63), [B, T, cfg.dModel], true);
      const state = m.initState(B);
      state.conv.set(data(state.conv.length, 64));
      const seed = data(B * T * cfg.dModel, 65);
      const leaves: Record<string, Tensor> = { u };
      for (const p of m.parameters()) leaves[p.name] = p.tensor;
      const f = withGrads(
        () => m.prefill({ ...state, conv: state.conv.slice(), ssm: state.ssm.slice() }, u),
        leaves,
        seed,
      );
      const tol: Record<string, number> = { y: 1e-5 };
      for (const k of Object.keys(leaves)) tol[`g${k}`] = 1e-5;
      check(run(f), tol, "mixer");
    });

    it("rejects wrong arrays instead of reading past them", () => {
      const x = new Float32Array(2 * 3 * 4);
      const w = new Float32Array(4 * 2);
      expect(() => addon.convFwd(2, 3, 4, 2, x, w, null, null, new Float32Array(5))).toThrow(
        /convFwd: y holds 5 values, needs 24/,
      );
      expect(() =>
        addon.convFwd(2, 3, 4, 2, x, w, null, null, new Float64Array(24) as unknown as F),
      ).toThrow(/convFwd: y must be a Float32Array/);
      expect(() => addon.convFwd(2, 3, 4, 0, x, w, null, null, x)).toThrow(/K must be ≥ 1/);
      expect(() => addon.softplusFwd(x, w, x, -1, 4, 0, Number.POSITIVE_INFINITY)).toThrow(
        /rows must be a non-negative integer/,
      );
    });
  },
);
