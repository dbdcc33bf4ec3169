/**
 * native/attention.c against the portable kernels it replaces: RoPE (forward, backward,
 * in place), the tiled causal GQA attention forward and backward, SwiGLU forward and backward.
 * Each case runs the portable loops (no native kernel registered), then the raw addon function
 * on 1 and on 2 OpenMP threads: native must match portable within the stated tolerance and the
 * 1- and 2-thread results must be bitwise identical (every output is owned by one work unit).
 * The last block switches the kernels on through enableNativeAttentionKernels and checks that
 * the ops route to them.
 */
import { backward, gradcheck, linear, Rng, reshape, Tensor } from "@loop/tensor";
import { nativeKernelNames } from "@loop/tensor/kernel";
import { buildNativeAddon } from "@loop/tensor/node";
import { itBuildsNativeAddon, nativeSuiteRuns } from "@loop/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { attention } from "../attention.js";
import { type FlashBwdNative, flashBackward } from "../attention-backward.js";
import { type FlashFwdNative, flashForward } from "../attention-forward.js";
import { projectedAttention } from "../projected-attention.js";
import { type RopeNative, rope, ropeInPlace, ropeTables } from "../rope.js";
import { type SwigluBwdNative, type SwigluFwdNative, swiglu } from "../swiglu.js";
import { TILE_CASES, type TileCase } from "../tile-cases.test-util.js";
import {
  attentionNativeSource,
  disableNativeAttentionKernels,
  enableNativeAttentionKernels,
} from "./index.js";

interface AttentionAddon {
  setThreads: (n: number) => void;
  rope: RopeNative;
  flashFwd: FlashFwdNative;
  flashBwd: FlashBwdNative;
  swigluFwd: SwigluFwdNative;
  swigluBwd: SwigluBwdNative;
}

const built = await buildNativeAddon<AttentionAddon>("attention", attentionNativeSource);

function normal(n: number, seed: number, std = 1): Float32Array {
  const out = new Float32Array(n);
  new Rng(seed).fillNormal(out, 0, std);
  return out;
}

/** Bitwise equality of two float arrays (fast: toEqual walks large typed arrays slowly). */
function sameBits(a: Float32Array | null, b: Float32Array | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    Buffer.compare(
      new Uint8Array(a.buffer, a.byteOffset, a.byteLength),
      new Uint8Array(b.buffer, b.byteOffset, b.byteLength),
    ) === 0
  );
}

/** max |a − b| / max(floor, max |b|): error relative to the size of the reference. */
function relToMax(a: Float32Array, b: Float32Array, floor = 1e-2): number {
  expect(a.length).toBe(b.length);
  let scale = floor;
  for (const x of b) scale = Math.max(scale, Math.abs(x));
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!) / scale);
  return worst;
}

/** max |a − b| / max(1, |b|) elementwise. */
function relEach(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++)
    worst = Math.max(worst, Math.abs(a[i]! - b[i]!) / Math.max(1, Math.abs(b[i]!)));
  return worst;
}

/** Run `f` with the addon on 1 and on 2 threads; both results, back on 1 thread after. */
function onThreads<R>(addon: AttentionAddon, f: () => R): [R, R] {
  addon.setThreads(1);
  const one = f();
  addon.setThreads(2);
  try {
    return [one, f()];
  } finally {
    addon.setThreads(1);
  }
}

type Grad = Float32Array | null;

/** flashBwd on packed arrays (every row stride 0). */
function bwdPacked(
  addon: AttentionAddon,
  [q, k, v, y, lse, gy]: Float32Array[],
  [dq, dk, dv]: [Grad, Grad, Grad],
  [B, T, Hq, Hkv, hd, bq, bk]: [number, number, number, number, number, number, number],
): void {
  addon.flashBwd(
    q!,
    k!,
    v!,
    y!,
    lse!,
    gy!,
    dq,
    dk,
    dv,
    B,
    T,
    Hq,
    Hkv,
    hd,
    bq,
    bk,
    0,
    0,
    0,
    0,
    0,
    0,
  );
}

describe("native attention addon build", () => {
  itBuildsNativeAddon("attention", built);
});

describe.runIf(nativeSuiteRuns("native attention kernels", built))(
  "native attention kernels match the portable ones",
  () => {
    const addon = (built as { addon: AttentionAddon }).addon;
    afterAll(() => {
      addon.setThreads(1);
      disableNativeAttentionKernels();
    });

    // B, T, H, hd, theta, offset
    const ropeCases: [number, number, number, number, number, number][] = [
      [1, 1, 1, 2, 10000, 0],
      [2, 17, 3, 6, 10000, 5],
      [3, 33, 4, 18, 500, 0],
      [16, 256, 4, 64, 10000, 0],
      [2, 100, 2, 32, 10000, 100_000],
    ];
    for (const [B, T, H, hd, theta, offset] of ropeCases) {
      it(`rope forward, backward and in place: B=${B} T=${T} H=${H} hd=${hd} offset=${offset}`, () => {
        const n = B * T * H * hd;
        const x = new Tensor(normal(n, 1), [B, T, H, hd], true);
        const g = normal(n, 2);
        const py = rope(x, { theta, offset });
        backward([py], [g]);
        const pgx = x.grad!;
        const pin = x.data.slice();
        ropeInPlace(pin, [B, T, H, hd], theta, offset);
        const { cos, sin } = ropeTables(hd, T, theta, offset);
        const runs = onThreads(addon, () => {
          const y = new Float32Array(n);
          const gx = new Float32Array(n);
          const inPlace = x.data.slice();
          addon.rope(x.data, y, B, T, H, hd, cos, sin, 1, 0);
          addon.rope(g, gx, B, T, H, hd, cos, sin, -1, 0);
          addon.rope(inPlace, inPlace, B, T, H, hd, cos, sin, 1, 0);
          return { y, gx, inPlace };
        });
        const [one, two] = runs;
        for (const key of ["y", "gx", "inPlace"] as const)
          expect(sameBits(one[key], two[key]), key).toBe(true);
        // Both compute in float64 and round once to float32: at most one float32 ulp apart.
        expect(relEach(one.y, py.data)).toBeLessThanOrEqual(1.2e-7);
        expect(relEach(one.gx, pgx)).toBeLessThanOrEqual(1.2e-7);
        expect(sameBits(one.inPlace, one.y)).toBe(true);
        expect(relEach(one.inPlace, pin)).toBeLessThanOrEqual(1.2e-7);
      });
    }

    // the shared small shapes, then larger ones: long rows, wide heads, many tiles a row
    const attCases: TileCase[] = [
      ...TILE_CASES,
      [3, 100, 4, 4, 64, 64, 64],
      [2, 130, 8, 2, 24, 32, 48],
      [2, 257, 4, 4, 64, 64, 64],
      [1, 97, 2, 1, 33, 40, 24],
      [2, 20, 6, 2, 10, 64, 32],
      [1, 150, 8, 1, 16, 64, 64],
    ];
    for (const [B, T, Hq, Hkv, hd, blockQ, blockK] of attCases) {
      it(`flash forward and backward: B=${B} T=${T} Hq=${Hq} Hkv=${Hkv} hd=${hd} tiles ${blockQ}×${blockK}`, () => {
        const nq = B * T * Hq * hd;
        const nk = B * T * Hkv * hd;
        const dims = { B, T, Hq, Hkv, hd, group: Hq / Hkv, blockQ, blockK };
        const q = normal(nq, 11);
        const k = normal(nk, 12);
        const v = normal(nk, 13);
        const gy = normal(nq, 14);
        // portable
        const py = new Float32Array(nq);
        const plse = new Float32Array(B * Hq * T);
        flashForward({ ...dims, q, k, v, y: py, lse: plse });
        const pg = { dq: new Float32Array(nq), dk: new Float32Array(nk), dv: new Float32Array(nk) };
        flashBackward({
          ...dims,
          ...pg,
          q,
          k,
          v,
          y: py,
          lse: plse,
          gy,
          needQ: true,
          needK: true,
          needV: true,
        });
        const [one, two] = onThreads(addon, () => {
          const y = new Float32Array(nq);
          const lse = new Float32Array(B * Hq * T);
          addon.flashFwd(q, k, v, y, lse, B, T, Hq, Hkv, hd, blockQ, blockK, 0, 0, 0);
          // outputs are overwritten: garbage on entry must not leak into them
          const dq = new Float32Array(nq).fill(7);
          const dk = new Float32Array(nk).fill(-3);
          const dv = new Float32Array(nk).fill(Number.NaN);
          // the backward from the portable forward's y and lse: the two are interchangeable
          bwdPacked(
            addon,
            [q, k, v, py, plse, gy],
            [dq, dk, dv],
            [B, T, Hq, Hkv, hd, blockQ, blockK],
          );
          return { y, lse, dq, dk, dv };
        });
        for (const key of ["y", "lse", "dq", "dk", "dv"] as const)
          expect(sameBits(one[key], two[key]), key).toBe(true);
        expect(relToMax(one.y, py)).toBeLessThan(2e-6);
        let lseErr = 0;
        for (let i = 0; i < plse.length; i++)
          lseErr = Math.max(lseErr, Math.abs(one.lse[i]! - plse[i]!));
        expect(lseErr).toBeLessThan(2e-6);
        expect(relToMax(one.dq, pg.dq)).toBeLessThan(1e-5);
        expect(relToMax(one.dk, pg.dk)).toBeLessThan(1e-5);
        expect(relToMax(one.dv, pg.dv)).toBeLessThan(1e-5);

        // subsets of the gradients: the others stay untouched, the computed ones are unchanged
        const dq = new Float32Array(nq).fill(5);
        const dk = new Float32Array(nk).fill(5);
        const dv = new Float32Array(nk).fill(5);
        bwdPacked(
          addon,
          [q, k, v, py, plse, gy],
          [dq, null, null],
          [B, T, Hq, Hkv, hd, blockQ, blockK],
        );
        bwdPacked(
          addon,
          [q, k, v, py, plse, gy],
          [null, dk, dv],
          [B, T, Hq, Hkv, hd, blockQ, blockK],
        );
        expect(sameBits(dq, one.dq)).toBe(true);
        expect(sameBits(dk, one.dk)).toBe(true);
        expect(sameBits(dv, one.dv)).toBe(true);
        bwdPacked(
          addon,
          [q, k, v, py, plse, gy],
          [null, null, dv.fill(5)],
          [B, T, Hq, Hkv, hd, 7, 5],
        );
        expect(relToMax(dv, pg.dv)).toBeLessThan(1e-5);

        // native backward from the native forward's y and lse
        const dq2 = new Float32Array(nq);
        bwdPacked(
          addon,
          [q, k, v, one.y, one.lse, gy],
          [dq2, null, null],
          [B, T, Hq, Hkv, hd, blockQ, blockK],
        );
        expect(relToMax(dq2, pg.dq)).toBeLessThan(1e-5);
      });
    }

    // B, T, Hq, Hkv, hd, blockQ, blockK
    const strideCases: [number, number, number, number, number, number, number][] = [
      [2, 17, 4, 2, 8, 5, 7],
      [1, 33, 6, 3, 6, 8, 8],
      [2, 130, 4, 4, 32, 96, 96],
    ];
    for (const [B, T, Hq, Hkv, hd, blockQ, blockK] of strideCases) {
      it(`rope and flash on column blocks of one [B, T, ·] array equal the packed kernels, bit for bit: B=${B} T=${T} Hq=${Hq} Hkv=${Hkv} hd=${hd}`, () => {
        const [nq, nk] = [Hq * hd, Hkv * hd];
        const W = nq + 2 * nk + 3; // q | k | v | 3 floats of padding per position
        const rows = B * T;
        const [q, k, v, gy] = [
          normal(rows * nq, 51),
          normal(rows * nk, 52),
          normal(rows * nk, 53),
          normal(rows * nq, 54),
        ];
        const { cos, sin } = ropeTables(hd, T, 10000, 2);
        const block = (src: Float32Array, n: number, off: number, dst: Float32Array) => {
          for (let r = 0; r < rows; r++) dst.set(src.subarray(r * n, (r + 1) * n), r * W + off);
        };
        const unblock = (src: Float32Array, n: number, off: number) => {
          const out = new Float32Array(rows * n);
          for (let r = 0; r < rows; r++) out.set(src.subarray(r * W + off, r * W + off + n), r * n);
          return out;
        };
        const [one, two] = onThreads(addon, () => {
          // packed
          const [qr, kr] = [new Float32Array(rows * nq), new Float32Array(rows * nk)];
          addon.rope(q, qr, B, T, Hq, hd, cos, sin, 1, 0);
          addon.rope(k, kr, B, T, Hkv, hd, cos, sin, 1, 0);
          const [y, lse] = [new Float32Array(rows * nq), new Float32Array(B * Hq * T)];
          addon.flashFwd(qr, kr, v, y, lse, B, T, Hq, Hkv, hd, blockQ, blockK, 0, 0, 0);
          const [dq, dk, dv] = [
            new Float32Array(rows * nq),
            new Float32Array(rows * nk),
            new Float32Array(rows * nk),
          ];
          bwdPacked(
            addon,
            [qr, kr, v, y, lse, gy],
            [dq, dk, dv],
            [B, T, Hq, Hkv, hd, blockQ, blockK],
          );
          // the same in column blocks, rotated in place
          const qkv = new Float32Array(rows * W).fill(Number.NaN);
          block(q, nq, 0, qkv);
          block(k, nk, nq, qkv);
          block(v, nk, nq + nk, qkv);
          const [qs, ks, vs] = [qkv, qkv.subarray(nq), qkv.subarray(nq + nk)];
          addon.rope(qs, qs, B, T, Hq, hd, cos, sin, 1, W);
          addon.rope(ks, ks, B, T, Hkv, hd, cos, sin, 1, W);
          expect(sameBits(unblock(qkv, nq, 0), qr)).toBe(true);
          expect(sameBits(unblock(qkv, nk, nq), kr)).toBe(true);
          const [ys, lses] = [
            new Float32Array(rows * nq).fill(1),
            new Float32Array(B * Hq * T).fill(1),
          ];
          addon.flashFwd(qs, ks, vs, ys, lses, B, T, Hq, Hkv, hd, blockQ, blockK, W, W, W);
          expect(sameBits(ys, y)).toBe(true);
          expect(sameBits(lses, lse)).toBe(true);
          const g = new Float32Array(rows * W).fill(Number.NaN);
          addon.flashBwd(
            qs,
            ks,
            vs,
            y,
            lse,
            gy,
            g,
            g.subarray(nq),
            g.subarray(nq + nk),
            B,
            T,
            Hq,
            Hkv,
            hd,
            blockQ,
            blockK,
            W,
            W,
            W,
            W,
            W,
            W,
          );
          expect(sameBits(unblock(g, nq, 0), dq)).toBe(true);
          expect(sameBits(unblock(g, nk, nq), dk)).toBe(true);
          expect(sameBits(unblock(g, nk, nq + nk), dv)).toBe(true);
          // the padding columns are never written
          for (let r = 0; r < rows; r++) expect(Number.isNaN(g[r * W + W - 1]!)).toBe(true);
          return g;
        });
        expect(sameBits(one, two)).toBe(true);
      });
    }

    it("rope and flash refuse row strides shorter than a row", () => {
      const x = normal(64, 1);
      const lse = new Float32Array(8);
      const { cos, sin } = ropeTables(4, 4, 10000, 0);
      expect(() => addon.rope(x, x, 1, 4, 2, 4, cos, sin, 1, 7)).toThrow(/rope/);
      expect(() => addon.flashFwd(x, x, x, x, lse, 1, 4, 2, 2, 4, 4, 4, 7, 0, 0)).toThrow(
        /flashFwd: bad arguments/,
      );
      expect(() =>
        addon.flashBwd(x, x, x, x, lse, x, x, null, null, 1, 4, 2, 2, 4, 4, 4, 0, 0, 0, 0, 7, 0),
      ).toThrow(/flashBwd: bad arguments/);
    });

    for (const n of [1, 15, 1000, 70_001]) {
      it(`swiglu forward and backward, n=${n}`, () => {
        const gate = new Tensor(normal(n, 21, 3), [n], true);
        const up = new Tensor(normal(n, 22), [n], true);
        const gy = normal(n, 23);
        const py = swiglu(gate, up);
        backward([py], [gy]);
        const [one, two] = onThreads(addon, () => {
          const y = new Float32Array(n);
          const dg = new Float32Array(n);
          const du = new Float32Array(n);
          addon.swigluFwd(gate.data, up.data, y, n);
          addon.swigluBwd(gate.data, up.data, gy, dg, du, n);
          return { y, dg, du };
        });
        for (const key of ["y", "dg", "du"] as const)
          expect(sameBits(one[key], two[key]), key).toBe(true);
        expect(relEach(one.y, py.data)).toBeLessThan(1e-6);
        expect(relEach(one.dg, gate.grad!)).toBeLessThan(1e-6);
        expect(relEach(one.du, up.grad!)).toBeLessThan(1e-6);
        const dgOnly = new Float32Array(n);
        const duOnly = new Float32Array(n);
        addon.swigluBwd(gate.data, up.data, gy, dgOnly, null, n);
        addon.swigluBwd(gate.data, up.data, gy, null, duOnly, n);
        expect(sameBits(dgOnly, one.dg)).toBe(true);
        expect(sameBits(duOnly, one.du)).toBe(true);
      });
    }

    it("enableNativeAttentionKernels routes rope, attention and swiglu to the addon", async () => {
      const [B, T, Hq, Hkv, hd] = [2, 70, 4, 2, 16];
      const make = () => ({
        q: new Tensor(normal(B * T * Hq * hd, 31), [B, T, Hq, hd], true),
        k: new Tensor(normal(B * T * Hkv * hd, 32), [B, T, Hkv, hd], true),
        v: new Tensor(normal(B * T * Hkv * hd, 33), [B, T, Hkv, hd], true),
        g: new Tensor(normal(B * T * Hq * hd, 34), [B, T, Hq, hd], true),
        u: new Tensor(normal(B * T * Hq * hd, 35), [B, T, Hq, hd], true),
      });
      const dy = normal(B * T * Hq * hd, 36);
      const run = () => {
        const t = make();
        const y = swiglu(attention(rope(t.q, { offset: 3 }), rope(t.k, { offset: 3 }), t.v), t.u);
        backward([y], [dy]);
        return { y: y.data, dq: t.q.grad!, dk: t.k.grad!, dv: t.v.grad!, du: t.u.grad! };
      };
      const portable = run();
      const r = await enableNativeAttentionKernels();
      expect(r.ok).toBe(true);
      expect(nativeKernelNames()).toEqual(
        expect.arrayContaining([
          "attention/rope",
          "attention/flashFwd",
          "attention/flashBwd",
          "attention/swigluFwd",
          "attention/swigluBwd",
        ]),
      );
      const native = run();

      // projections, RoPE and attention as one op: one GEMM for q | k | v, RoPE in place, the
      // kernels on column blocks; against the same ops one by one, both on the native kernels
      const D = 24;
      const u = new Tensor(normal(B * T * D, 37), [B, T, D], true);
      const ws = [Hq * hd, Hkv * hd, Hkv * hd].map(
        (r, i) => new Tensor(normal(r * D, 38 + i, 0.3), [r, D], true),
      ) as [Tensor, Tensor, Tensor];
      const gy = normal(B * T * Hq * hd, 41);
      const grads = (y: Tensor) => {
        for (const t of [u, ...ws]) t.grad = null;
        backward([y], [gy]);
        return [y.data, u.grad!, ...ws.map((w) => w.grad!)];
      };
      const opts = { theta: 500, offset: 5 };
      const fused = grads(projectedAttention(u, ...ws, { nHeads: Hq, nKvHeads: Hkv, rope: opts }));
      const apart = grads(
        reshape(
          attention(
            rope(reshape(linear(u, ws[0]), [B, T, Hq, hd]), opts),
            rope(reshape(linear(u, ws[1]), [B, T, Hkv, hd]), opts),
            reshape(linear(u, ws[2]), [B, T, Hkv, hd]),
          ),
          [B, T, Hq * hd],
        ),
      );
      // y and the weight gradients are the same bits; ∂u sums its three terms in another order
      for (const i of [0, 2, 3, 4])
        expect(sameBits(fused[i]!, apart[i]!), `output ${i}`).toBe(true);
      expect(relToMax(fused[1]!, apart[1]!)).toBeLessThan(1e-6);
      const small = new Tensor(normal(2 * 5 * 8, 42), [2, 5, 8], true);
      const sw = [4, 2, 2].map((r, i) => new Tensor(normal(r * 8, 43 + i, 0.5), [r, 8], true));
      // finite differences of the fused op (gradcheck throws past its tolerance)
      gradcheck(
        () =>
          projectedAttention(small, sw[0]!, sw[1]!, sw[2]!, { nHeads: 2, nKvHeads: 1, rope: opts }),
        [small, ...sw],
        { maxPerInput: 24 },
      );
      disableNativeAttentionKernels();
      for (const key of ["y", "dq", "dk", "dv", "du"] as const) {
        expect(sameBits(native[key], portable[key]), `${key} differs: native ran`).toBe(false);
        expect(relToMax(native[key], portable[key]), key).toBeLessThan(1e-5);
      }
      expect(nativeKernelNames().some((s) => s.startsWith("attention/"))).toBe(false);
    });
  },
);
