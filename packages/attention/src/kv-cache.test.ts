import { noGrad } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { attentionRef } from "./attention-ref.js";
import { appendAndAttend, KvCache } from "./kv-cache.js";

describe("KvCache", () => {
  it("appendAndAttend over chunks equals causal attention over the whole sequence", () => {
    const [B, T, Hq, Hkv, hd] = [2, 7, 4, 2, 6];
    const q = randn([B, T, Hq, hd], 1, { requiresGrad: false });
    const k = randn([B, T, Hkv, hd], 2, { requiresGrad: false });
    const v = randn([B, T, Hkv, hd], 3, { requiresGrad: false });
    const want = noGrad(() => attentionRef(q, k, v)).data;
    const cache = new KvCache(B, 9, Hkv, hd);
    const slice = (x: Float32Array, H: number, t0: number, t1: number) => {
      const out = new Float32Array(B * (t1 - t0) * H * hd);
      for (let b = 0; b < B; b++) {
        out.set(x.subarray((b * T + t0) * H * hd, (b * T + t1) * H * hd), b * (t1 - t0) * H * hd);
      }
      return out;
    };
    for (const [t0, t1] of [
      [0, 3],
      [3, 4],
      [4, 7],
    ] as const) {
      const n = t1 - t0;
      const out = new Float32Array(B * n * Hq * hd);
      appendAndAttend(
        cache,
        slice(q.data, Hq, t0, t1),
        slice(k.data, Hkv, t0, t1),
        slice(v.data, Hkv, t0, t1),
        n,
        Hq,
        out,
      );
      const expected = slice(want, Hq, t0, t1);
      for (let i = 0; i < out.length; i++) expect(out[i]).toBeCloseTo(expected[i]!, 5);
      expect(cache.length).toBe(t1);
    }
    cache.reset();
    expect(cache.length).toBe(0);
    expect(cache.bytes).toBe(2 * B * Hkv * 9 * hd * 4);
  });

  it("rejects bad sizes and overflow, naming the values", () => {
    expect(() => new KvCache(1, 0, 1, 4)).toThrow(/capacity.*0/);
    expect(() => new KvCache(1.5, 4, 1, 4)).toThrow(/batch.*1\.5/);
    const cache = new KvCache(1, 2, 1, 2);
    const x = new Float32Array(6);
    expect(() => appendAndAttend(cache, x, x, x, 3, 1, new Float32Array(6))).toThrow(
      /3 position\(s\) at length 0 exceeds capacity 2/,
    );
  });
});
