import { readFileSync } from "node:fs";
import { backward, gradcheck, noGrad, type Tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { expectGolden, goldenPath, loadGolden } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { attention } from "./attention.js";
import { attentionRef } from "./attention-ref.js";
import { TILE_CASES, type TileCase } from "./tile-cases.test-util.js";

type Fn = (q: Tensor, k: Tensor, v: Tensor) => Tensor;

/** Output and q/k/v gradients of Σ f(q,k,v) ⊙ dy. */
function run(f: Fn, q: Tensor, k: Tensor, v: Tensor, dy: Float32Array) {
  for (const t of [q, k, v]) t.grad = null;
  const y = f(q, k, v);
  backward([y], [dy]);
  return { y: y.data, dq: q.grad!, dk: k.grad!, dv: v.grad! };
}

function maxRelDiff(a: Float32Array, b: Float32Array): number {
  // Floor: with T = 1 the exact dq is zero and both sides hold only rounding noise.
  let scale = 1e-2;
  for (const x of b) scale = Math.max(scale, Math.abs(x));
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!) / scale);
  return worst;
}

describe("tiled attention matches the quadratic reference", () => {
  const cases: TileCase[] = [...TILE_CASES, [1, 50, 2, 2, 8, 64, 64]];
  for (const [B, T, Hq, Hkv, hd, bq, bk] of cases) {
    it(`B=${B} T=${T} Hq=${Hq} Hkv=${Hkv} hd=${hd} tiles ${bq}×${bk}`, () => {
      const q = randn([B, T, Hq, hd], 1);
      const k = randn([B, T, Hkv, hd], 2);
      const v = randn([B, T, Hkv, hd], 3);
      const dy = randn([B, T, Hq, hd], 4).data;
      const ref = run(attentionRef, q, k, v, dy);
      const fast = run((a, b, c) => attention(a, b, c, { blockQ: bq, blockK: bk }), q, k, v, dy);
      expect(maxRelDiff(fast.y, ref.y)).toBeLessThan(1e-5);
      expect(maxRelDiff(fast.dq, ref.dq)).toBeLessThan(1e-5);
      expect(maxRelDiff(fast.dk, ref.dk)).toBeLessThan(1e-5);
      expect(maxRelDiff(fast.dv, ref.dv)).toBeLessThan(1e-5);
    });
  }

  it("is causal: changing a later token leaves earlier outputs unchanged", () => {
    const q = randn([1, 12, 2, 4], 5, { requiresGrad: false });
    const k = randn([1, 12, 1, 4], 6, { requiresGrad: false });
    const v = randn([1, 12, 1, 4], 7, { requiresGrad: false });
    const y0 = attention(q, k, v, { blockQ: 4, blockK: 4 }).data.slice();
    for (let e = 0; e < 4; e++) {
      k.data[8 * 4 + e] = 3;
      v.data[8 * 4 + e] = -5;
    }
    const y1 = attention(q, k, v, { blockQ: 4, blockK: 4 }).data;
    const row = 2 * 4;
    expect(Array.from(y1.subarray(0, 8 * row))).toEqual(Array.from(y0.subarray(0, 8 * row)));
    expect(y1[8 * row]).not.toBe(y0[8 * row]);
  });

  it("first position copies v of its KV head exactly", () => {
    const q = randn([1, 3, 4, 2], 8, { requiresGrad: false });
    const k = randn([1, 3, 2, 2], 9, { requiresGrad: false });
    const v = randn([1, 3, 2, 2], 10, { requiresGrad: false });
    const y = noGrad(() => attention(q, k, v));
    // heads 0,1 → kv 0; heads 2,3 → kv 1
    expect(Array.from(y.data.subarray(0, 8))).toEqual([
      ...v.data.subarray(0, 2),
      ...v.data.subarray(0, 2),
      ...v.data.subarray(2, 4),
      ...v.data.subarray(2, 4),
    ]);
  });
});

describe("attention gradients (finite differences)", () => {
  it("tiled kernel", () => {
    const q = randn([2, 7, 4, 4], 11);
    const k = randn([2, 7, 2, 4], 12);
    const v = randn([2, 7, 2, 4], 13);
    gradcheck(() => attention(q, k, v, { blockQ: 3, blockK: 2 }), [q, k, v]);
  });
  it("tiled kernel, gradient for a subset of inputs", () => {
    const q = randn([1, 6, 2, 4], 14);
    const k = randn([1, 6, 1, 4], 15, { requiresGrad: false });
    const v = randn([1, 6, 1, 4], 16);
    gradcheck(() => attention(q, k, v, { blockQ: 4, blockK: 4 }), [q, v]);
  });
  it("quadratic reference", () => {
    const q = randn([2, 6, 3, 4], 17);
    const k = randn([2, 6, 1, 4], 18);
    const v = randn([2, 6, 1, 4], 19);
    gradcheck(() => attentionRef(q, k, v), [q, k, v]);
  });
});

describe("attention golden vectors (kernels/attention)", () => {
  const g = loadGolden("kernels", "attention.safetensors");
  it("case settings are the ones the kernels implement (causal, scale 1/sqrt(hd))", () => {
    const { settings } = JSON.parse(
      readFileSync(goldenPath("kernels", "attention.json"), "utf8"),
    ) as {
      settings: {
        causal: boolean;
        scale: number;
        head_dim: number;
        n_heads: number;
        n_kv_heads: number;
      };
    };
    expect(settings.causal).toBe(true);
    expect(settings.scale).toBeCloseTo(1 / Math.sqrt(settings.head_dim), 12);
    expect(g.get("q")!.shape.slice(2)).toEqual([settings.n_heads, settings.head_dim]);
    expect(g.get("k")!.shape[2]).toBe(settings.n_kv_heads);
  });
  for (const [name, f] of [
    ["tiled", (q: Tensor, k: Tensor, v: Tensor) => attention(q, k, v, { blockQ: 5, blockK: 6 })],
    ["reference", attentionRef],
  ] as [string, Fn][]) {
    it(`${name} matches y and grad.q/k/v`, () => {
      const [q, k, v] = ["q", "k", "v"].map((n) => {
        const t = g.get(n)!;
        const x = randn(t.shape, 0);
        x.data.set(t.data);
        return x;
      }) as [Tensor, Tensor, Tensor];
      const out = run(f, q, k, v, g.get("dy")!.data);
      expectGolden("y", out.y, g.get("y")!.data, "forward");
      expectGolden("grad.q", out.dq, g.get("grad.q")!.data, "grad");
      expectGolden("grad.k", out.dk, g.get("grad.k")!.data, "grad");
      expectGolden("grad.v", out.dv, g.get("grad.v")!.data, "grad");
    });
  }
});

describe("attention input checks", () => {
  it("rejects Hq not divisible by Hkv, naming both", () => {
    const q = randn([1, 4, 3, 4], 1);
    const k = randn([1, 4, 2, 4], 2);
    expect(() => attention(q, k, k)).toThrow(/Hq=3.*Hkv=2/);
    expect(() => attentionRef(q, k, k)).toThrow(/Hq=3.*Hkv=2/);
  });
  it("rejects mismatched shapes and bad tile sizes", () => {
    const q = randn([1, 4, 2, 4], 1);
    const k = randn([1, 5, 2, 4], 2);
    expect(() => attention(q, k, k)).toThrow(/k must be \[1, 4, Hkv, 4\].*\[1,5,2,4\]/);
    expect(() => attention(q, q, q, { blockQ: 0 })).toThrow(/blockQ.*0/);
  });
});
