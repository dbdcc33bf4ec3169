/**
 * The WebGPU backend's attention decode over a device KV cache (`gpuModelOps(ctx).attendStep`:
 * kernels/kv-append.ts, kernels/attention-decode.ts) on SwiftShader: token by token, each
 * output equals that position's row of the CPU's causal GQA attention over the whole sequence
 * (`attentionRef` of q and k rotated by the CPU's `rope`); picked cache rows leave the others as
 * they were; without q the token's entry is written and nothing returned (and a later query
 * gets bit for bit what it gets after tokens that attended); bad calls get one line naming the
 * problem.
 */
import { attentionRef, rope } from "@loop/attention";
import { Rng, tensor } from "@loop/tensor";
import { expectClose, gpuForTests } from "@loop/test-support-gpu";
import { gpuModelOps, releaseTransients } from "@loop/webgpu";
import { describe, expect, it } from "vitest";

const ctx = await gpuForTests("webgpu attention decode");

const THETA = 500;
const TOL = { atol: 2e-5, rtol: 1e-4 };

/** Position t of x [B, T, H, hd] as [B, H, hd]. */
function at(x: Float32Array, B: number, T: number, H: number, hd: number, t: number): Float32Array {
  const out = new Float32Array(B * H * hd);
  for (let b = 0; b < B; b++)
    out.set(x.subarray((b * T + t) * H * hd, ((b * T + t) * H + H) * hd), b * H * hd);
  return out;
}

/** A sequence's random q, k, v and the CPU's causal attention of RoPE'd q, k over it. */
function sequence(B: number, T: number, Hq: number, Hkv: number, hd: number, seed: number) {
  const rng = new Rng(seed);
  const q = rng.fillNormal(new Float32Array(B * T * Hq * hd));
  const k = rng.fillNormal(new Float32Array(B * T * Hkv * hd));
  const v = rng.fillNormal(new Float32Array(B * T * Hkv * hd));
  const rq = rope(tensor(q, [B, T, Hq, hd]), { theta: THETA, offset: 0 });
  const rk = rope(tensor(k, [B, T, Hkv, hd]), { theta: THETA, offset: 0 });
  const want = attentionRef(rq, rk, tensor(v, [B, T, Hkv, hd])).data as Float32Array;
  return { q, k, v, rk: rk.data as Float32Array, want };
}

describe.runIf(ctx)("the WebGPU attention decode against the CPU's attention", () => {
  const ops = () => gpuModelOps(ctx!);

  it.each([
    ["GQA 4 query heads over 2 KV heads, hd 8", 2, 9, 4, 2, 8],
    ["one head, hd 70 over 70 positions (more than a workgroup's 64 lanes)", 1, 70, 1, 1, 70],
  ] as const)("%s: token by token equals causal attention", async (_n, B, T, Hq, Hkv, hd) => {
    const g = ops();
    const { q, k, v, rk, want } = sequence(B, T, Hq, Hkv, hd, 3);
    const cap = T + 3;
    const zeros = new Float32Array(B * Hkv * cap * hd);
    const cache = {
      k: g.upload(zeros, [B, Hkv, cap, hd], { persistent: true }),
      v: g.upload(zeros, [B, Hkv, cap, hd], { persistent: true }),
    };
    for (let t = 0; t < T; t++) {
      const out = g.attendStep(
        cache,
        g.upload(at(q, B, T, Hq, hd, t), [B, Hq, hd]),
        g.upload(at(k, B, T, Hkv, hd, t), [B, Hkv, hd]),
        g.upload(at(v, B, T, Hkv, hd, t), [B, Hkv, hd]),
        t,
        { theta: THETA },
      );
      await expectClose(out!, at(want, B, T, Hq, hd, t), `position ${t}`, TOL);
      releaseTransients(ctx!);
    }
    // the cache holds the rotated keys at their positions
    const kc = await g.read(cache.k);
    const last = T - 1;
    for (let b = 0; b < B; b++)
      for (let h = 0; h < Hkv; h++) {
        const o = ((b * Hkv + h) * cap + last) * hd;
        const w = ((b * T + last) * Hkv + h) * hd;
        await expectClose(kc.subarray(o, o + hd), rk.subarray(w, w + hd), "cached key", TOL);
      }
    g.dispose(cache.k);
    g.dispose(cache.v);
  });

  it("steps picked cache rows only, and writes without a query", async () => {
    const g = ops();
    const [S, T, Hq, Hkv, hd] = [3, 6, 4, 2, 6];
    const picked = [2, 0];
    const B = picked.length;
    const { q, k, v, want } = sequence(B, T, Hq, Hkv, hd, 9);
    const cap = T;
    const zeros = new Float32Array(S * Hkv * cap * hd);
    const cache = {
      k: g.upload(zeros, [S, Hkv, cap, hd], { persistent: true }),
      v: g.upload(zeros, [S, Hkv, cap, hd], { persistent: true }),
    };
    const rows = g.uploadInt(Int32Array.from(picked), [B]);
    for (let t = 0; t < T; t++) {
      // every other token writes its entry alone (an exited token's), the rest attend
      const withQ = t % 2 === 1;
      const out = g.attendStep(
        cache,
        withQ ? g.upload(at(q, B, T, Hq, hd, t), [B, Hq, hd]) : null,
        g.upload(at(k, B, T, Hkv, hd, t), [B, Hkv, hd]),
        g.upload(at(v, B, T, Hkv, hd, t), [B, Hkv, hd]),
        t,
        { rows, theta: THETA },
      );
      if (withQ) await expectClose(out!, at(want, B, T, Hq, hd, t), `position ${t}`, TOL);
      else expect(out).toBeNull();
    }
    // input row j's values went to cache row picked[j]; row 1 was never touched
    const vc = await g.read(cache.v);
    const rowWidth = Hkv * cap * hd;
    picked.forEach((s, j) => {
      for (let h = 0; h < Hkv; h++)
        for (let t = 0; t < T; t++) {
          const o = s * rowWidth + (h * cap + t) * hd;
          const w = ((j * T + t) * Hkv + h) * hd;
          expect(Array.from(vc.subarray(o, o + hd))).toEqual(Array.from(v.subarray(w, w + hd)));
        }
    });
    expect(vc.subarray(rowWidth, 2 * rowWidth).every((x) => x === 0)).toBe(true);
    expect((await g.read(cache.k)).subarray(rowWidth, 2 * rowWidth).every((x) => x === 0)).toBe(
      true,
    );
    g.dispose(cache.k);
    g.dispose(cache.v);
    releaseTransients(ctx!);
  });

  it("gives the same numbers whether the earlier tokens attended or only wrote", async () => {
    const g = ops();
    const [B, T, Hq, Hkv, hd] = [2, 5, 4, 2, 8];
    const { q, k, v } = sequence(B, T, Hq, Hkv, hd, 17);
    const lastOutput = async (attendAll: boolean) => {
      const zeros = new Float32Array(B * Hkv * T * hd);
      const cache = {
        k: g.upload(zeros, [B, Hkv, T, hd], { persistent: true }),
        v: g.upload(zeros, [B, Hkv, T, hd], { persistent: true }),
      };
      let out: Float32Array | null = null;
      for (let t = 0; t < T; t++) {
        const withQ = attendAll || t === T - 1;
        const o = g.attendStep(
          cache,
          withQ ? g.upload(at(q, B, T, Hq, hd, t), [B, Hq, hd]) : null,
          g.upload(at(k, B, T, Hkv, hd, t), [B, Hkv, hd]),
          g.upload(at(v, B, T, Hkv, hd, t), [B, Hkv, hd]),
          t,
          { theta: THETA },
        );
        if (!withQ) expect(o).toBeNull();
        if (t === T - 1) out = await g.read(o!);
      }
      g.dispose(cache.k);
      g.dispose(cache.v);
      releaseTransients(ctx!);
      return Array.from(out!);
    };
    // (the reductions add in a fixed order: bit for bit)
    expect(await lastOutput(false)).toEqual(await lastOutput(true));
  });

  it("refuses bad shapes, positions outside the capacity and rows that repeat", () => {
    const g = ops();
    const z = (shape: number[]) => g.upload(new Float32Array(shape.reduce((a, b) => a * b)), shape);
    const cache = { k: z([3, 2, 4, 8]), v: z([3, 2, 4, 8]) };
    const q = z([2, 4, 8]);
    const kv = z([2, 2, 8]);
    const rows = (ids: number[]) => g.uploadInt(Int32Array.from(ids), [ids.length]);
    const step =
      (opts: Partial<Parameters<typeof g.attendStep>[5]>, pos = 0, qq = q, k = kv) =>
      () =>
        g.attendStep(cache, qq, k, kv, pos, { theta: THETA, rows: rows([0, 2]), ...opts });
    expect(step({}, 4)).toThrow("webgpu attendStep: position 4 is outside the cache's capacity 4");
    expect(step({}, -1)).toThrow("position -1 is outside the cache's capacity 4");
    expect(step({ rows: rows([1, 1]) })).toThrow(
      "webgpu attendStep: rows must be 2 distinct state rows of 0..2, got [1,1] (a row repeats)",
    );
    expect(step({ rows: rows([0, 3]) })).toThrow("got row 3");
    expect(step({ rows: null })).toThrow("the state holds 3 rows, the input 2 (pass rows to pick)");
    expect(step({}, 0, z([2, 3, 8]))).toThrow("2 KV heads do not divide 3 query heads");
    expect(step({}, 0, z([2, 4, 6]))).toThrow("q must be [2,Hq,8], got [2,4,6]");
    expect(step({}, 0, q, z([2, 1, 8]))).toThrow("k must be [B,2,8] (the cache's heads)");
    releaseTransients(ctx!);
  });
});
