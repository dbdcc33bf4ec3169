import { describe, expect, it } from "vitest";
import { backward } from "../autograd/backward.js";
import { gradcheck } from "../gradcheck.js";
import { randn, randu } from "../random-tensor.js";
import { Rng } from "../rng.js";
import type { Tensor } from "../tensor.js";
import { add, div, mul, scale, sub } from "./binary.js";
import { broadcastIndex, broadcastShape } from "./broadcast.js";
import { fastExp } from "./fast-exp.js";
import { concat, reshape, split } from "./shape.js";
import { sigmoidScalar, silu, softplusScalar } from "./unary.js";

describe("fastExp (fast e^x, x ≤ 80) against Math.exp", () => {
  it("agrees to float32 precision over the whole range", () => {
    const rng = new Rng(1);
    let worst = 0;
    for (let i = 0; i < 20000; i++) {
      const x = -rng.uniform() * (i % 2 ? 1 : 120);
      const ref = Math.exp(x);
      worst = Math.max(worst, Math.abs(fastExp(x) - ref) / ref);
    }
    expect(worst).toBeLessThan(2e-8);
    expect(fastExp(0)).toBe(1);
    expect(fastExp(-0)).toBe(1);
    expect(fastExp(-800)).toBe(0);
    expect(fastExp(Number.NEGATIVE_INFINITY)).toBe(0);
    expect(fastExp(Number.NaN)).toBeNaN();
  });
  it("matches Math.exp to 1e-8 relative from −700 to 80 (the softmax range of attention)", () => {
    let worst = 0;
    for (let i = 0; i <= 200_000; i++) {
      const x = -700 + (i / 200_000) * 780;
      const want = Math.exp(x);
      worst = Math.max(worst, Math.abs(fastExp(x) - want) / want);
    }
    expect(worst).toBeLessThan(1e-8);
    expect(fastExp(-3 * Math.LN2)).toBeCloseTo(0.125, 15);
  });
  it("sigmoid and softplus keep their exact forms", () => {
    for (const x of [-50, -3, -1e-3, 0, 1e-3, 2, 40]) {
      const s = 1 / (1 + Math.exp(-x));
      const sp = Math.log1p(Math.exp(x));
      expect(Math.abs(sigmoidScalar(x) - s) / s).toBeLessThan(2e-8);
      expect(Math.abs(softplusScalar(x) - sp) / sp).toBeLessThan(2e-8);
    }
  });
});

/** Reference broadcast op through the generic index map. */
function refBinary(kind: string, a: Tensor, b: Tensor): number[] {
  const shape = broadcastShape(a.shape, b.shape, kind);
  const ia = broadcastIndex(a.shape, shape);
  const ib = broadcastIndex(b.shape, shape);
  const n = shape.reduce((p, d) => p * d, 1);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = a.data[ia ? ia[i]! : i]!;
    const z = b.data[ib ? ib[i]! : i]!;
    out.push(
      Math.fround(kind === "add" ? x + z : kind === "sub" ? x - z : kind === "mul" ? x * z : x / z),
    );
  }
  return out;
}

describe("binary ops: block and scalar broadcasts", () => {
  const ops = { add, sub, mul, div };
  for (const [kind, f] of Object.entries(ops)) {
    it(`${kind}: [2,3,4] with [4], [1,4], [] and [4] with [2,3,4] match the index-map reference`, () => {
      const a = randn([2, 3, 4], 11);
      for (const shape of [[4], [1, 4], [], [3, 4]]) {
        const b = kind === "div" ? randu(shape, 12, 1, 2) : randn(shape, 12);
        expect(Array.from(f(a, b).data)).toEqual(refBinary(kind, a, b));
        gradcheck(() => f(a, b), [a, b]);
        const c = kind === "div" ? randu([2, 3, 4], 13, 1, 2) : a;
        expect(Array.from(f(b, c).data)).toEqual(refBinary(kind, b, c));
        gradcheck(() => f(b, c), kind === "div" ? [b, c] : [b, a]);
      }
    });
  }
});

describe("shared gradient arrays (copy on write)", () => {
  it("add(x, x) and chains of reshape and add sum correctly", () => {
    const x = randn([3, 4], 21);
    const w = randn([3, 4], 22);
    gradcheck(() => add(x, x), [x]);
    // x reaches the output along paths that share one gradient array: add → reshape → add
    gradcheck(() => {
      const h = add(x, w);
      const r = add(h, reshape(reshape(h, [12]), [3, 4]));
      return add(mul(r, x), reshape(sub(reshape(r, [4, 3]), reshape(w, [4, 3])), [3, 4]));
    }, [x, w]);
  });
  it("a residual stream looped through split, silu and add", () => {
    const x = randn([2, 6], 23);
    const v = randn([2, 2], 24, { std: 0.5 });
    gradcheck(() => {
      let h = x;
      for (let i = 0; i < 3; i++) {
        const [p, q] = split(silu(h), [2, 4]) as [Tensor, Tensor];
        h = add(h, scale(concat([mul(p, v), q]), 0.5));
      }
      return h;
    }, [x, v]);
  });
  it("never writes into a caller's seed", () => {
    const x = randn([4], 24);
    const y = add(x, x);
    const z = add(y, y);
    const seed = Float32Array.of(1, 2, 3, 4);
    backward([z, y], [seed, seed]);
    expect(Array.from(seed)).toEqual([1, 2, 3, 4]);
    // dz/dx = 4, dy/dx = 2, each times its seed
    expect(Array.from(x.grad!)).toEqual([6, 12, 18, 24]);
  });
});
