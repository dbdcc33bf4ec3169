import { describe, expect, it } from "vitest";
import { backward } from "../autograd/backward.js";
import { noGrad } from "../autograd/node.js";
import { gradcheck } from "../gradcheck.js";
import { randn, randu } from "../random-tensor.js";
import { intTensor, tensor } from "../tensor.js";
import { add, div, mul, scale, sub } from "./binary.js";
import { embedding } from "./embedding.js";
import { crossEntropy, crossEntropyPerToken, entropy, logSoftmax } from "./loss.js";
import { linear, matmul } from "./matmul.js";
import { mean, meanLast, sum, sumLast } from "./reduce.js";
import { rmsnorm } from "./rmsnorm.js";
import { concat, reshape, sliceRows, split, stack } from "./shape.js";
import { exp, log, logsigmoid, neg, sigmoid, silu, softplus } from "./unary.js";

describe("elementwise ops", () => {
  for (const [name, f] of Object.entries({ silu, softplus, exp, sigmoid, logsigmoid, neg })) {
    it(`${name} gradient`, () => {
      const x = randn([3, 5], 1);
      gradcheck(() => f(x), [x]);
    });
  }
  it("log gradient", () => {
    const x = randu([4, 3], 2, 0.5, 2);
    gradcheck(() => log(x), [x]);
  });
  it("softplus and logsigmoid are stable for large |x|", () => {
    const x = tensor([-100, -30, 0, 30, 100], undefined, false);
    expect(Array.from(softplus(x).data)).toEqual([
      expect.closeTo(0, 30),
      expect.closeTo(9.357e-14, 15),
      Math.fround(Math.log(2)),
      30,
      100,
    ]);
    expect(logsigmoid(x).data[0]).toBeCloseTo(-100, 4);
    expect(logsigmoid(x).data[4]).toBeCloseTo(0, 6);
  });
  for (const [name, f] of Object.entries({ add, sub, mul, div })) {
    it(`${name} with broadcasting gradient`, () => {
      const a = randn([2, 3, 4], 3);
      const b = name === "div" ? randu([3, 1], 4, 1, 2) : randn([3, 1], 4);
      gradcheck(() => f(a, b), [a, b]);
      const c = randn([4], 5);
      gradcheck(() => f(a, name === "div" ? add(scale(c, 0.1), tensor([3, 3, 3, 3])) : c), [a, c]);
    });
  }
  it("scale gradient", () => {
    const x = randn([7], 6);
    gradcheck(() => scale(x, -2.5, 1), [x]);
  });
});

describe("matmul and linear", () => {
  for (const tA of [false, true]) {
    for (const tB of [false, true]) {
      it(`matmul transA=${tA} transB=${tB} batched and shared`, () => {
        const a = randn(tA ? [2, 4, 3] : [2, 3, 4], 7);
        const b = randn(tB ? [2, 5, 4] : [2, 4, 5], 8);
        gradcheck(() => matmul(a, b, { transA: tA, transB: tB }), [a, b]);
        const w = randn(tB ? [5, 4] : [4, 5], 9);
        gradcheck(() => matmul(a, w, { transA: tA, transB: tB }), [a, w]);
      });
    }
  }
  it("matmul values", () => {
    const a = tensor([1, 2, 3, 4, 5, 6], [2, 3]);
    const b = tensor([1, 0, 0, 1, 1, 1], [3, 2]);
    expect(Array.from(matmul(a, b).data)).toEqual([4, 5, 10, 11]);
  });
  it("linear with and without bias", () => {
    const x = randn([2, 3, 6], 10);
    const w = randn([4, 6], 11);
    const bias = randn([4], 12);
    gradcheck(() => linear(x, w, bias), [x, w, bias]);
    gradcheck(() => linear(x, w), [x, w]);
    expect(() => linear(x, randn([4, 5], 1))).toThrow(/last axis 6/);
  });
});

describe("reductions, norms, gathers, shapes", () => {
  it("sum, mean, sumLast, meanLast", () => {
    const x = randn([3, 4], 13);
    gradcheck(() => sum(x), [x]);
    gradcheck(() => mean(x), [x]);
    gradcheck(() => sumLast(x), [x]);
    gradcheck(() => meanLast(x), [x]);
  });
  it("rmsnorm forward and gradient", () => {
    const x = randn([3, 8], 14);
    const w = randn([8], 15);
    gradcheck(() => rmsnorm(x, w, 1e-5), [x, w]);
    const y = noGrad(() => rmsnorm(x, tensor(new Array(8).fill(1)), 0));
    let ss = 0;
    for (let j = 0; j < 8; j++) ss += y.data[j]! ** 2;
    expect(ss / 8).toBeCloseTo(1, 5);
  });
  it("embedding scatter-adds repeated ids", () => {
    const w = randn([5, 3], 16);
    const ids = intTensor([1, 3, 1, 0], [2, 2]);
    gradcheck(() => embedding(ids, w), [w]);
    expect(() => embedding(intTensor([5]), w)).toThrow(/outside \[0, 5\)/);
  });
  it("concat, split, reshape, sliceRows, stack", () => {
    const a = randn([2, 3], 17);
    const b = randn([2, 2], 18);
    gradcheck(() => concat([a, b]), [a, b]);
    const c = randn([2, 7], 19);
    gradcheck(() => split(c, [3, 0, 4]), [c]);
    gradcheck(() => split(c, [3, 4])[1]!, [c]);
    gradcheck(() => reshape(c, [7, -1]), [c]);
    gradcheck(() => sliceRows(reshape(c, [7, 2]), 2, 5), [c]);
    gradcheck(() => stack([a, a, scale(a, 2)]), [a]);
    expect(() => split(c, [3, 3])).toThrow(/do not sum/);
  });
});

describe("losses", () => {
  it("logSoftmax gradient and normalisation", () => {
    const x = randn([3, 6], 20);
    gradcheck(() => logSoftmax(x), [x]);
    const y = logSoftmax(x);
    let s = 0;
    for (let j = 0; j < 6; j++) s += Math.exp(y.data[j]!);
    expect(s).toBeCloseTo(1, 6);
  });
  it("cross-entropy ignores -100 and matches a manual value", () => {
    const x = randn([2, 3, 5], 21, { std: 3 });
    const t = intTensor([0, -100, 4, 2, 1, -100], [2, 3]);
    gradcheck(() => crossEntropy(x, t), [x]);
    gradcheck(() => crossEntropyPerToken(x, t), [x]);
    const ls = logSoftmax(x);
    const manual =
      -(ls.data[0]! + ls.data[2 * 5 + 4]! + ls.data[3 * 5 + 2]! + ls.data[4 * 5 + 1]!) / 4;
    expect(crossEntropy(x, t).item()).toBeCloseTo(manual, 5);
    expect(() => crossEntropy(x, intTensor([0, 0, 9, 0, 0, 0], [2, 3]))).toThrow(/target 9/);
  });
  it("cross-entropy is stable for huge logits", () => {
    const x = tensor([1000, 0, -1000], [1, 3]);
    expect(crossEntropy(x, intTensor([0], [1])).item()).toBe(0);
    expect(crossEntropy(x, intTensor([1], [1])).item()).toBeCloseTo(1000, 3);
  });
  it("entropy", () => {
    const p = randu([3, 4], 22, 0.1, 1);
    gradcheck(() => entropy(p), [p]);
    expect(entropy(tensor([0.5, 0.5, 0, 0], [1, 4])).item()).toBeCloseTo(Math.log(2), 6);
  });
});

describe("autograd engine", () => {
  it("accumulates the gradient of a weight used many times", () => {
    const w = randn([3, 3], 23, { std: 0.3 });
    const x0 = randn([2, 3], 24, { requiresGrad: false });
    gradcheck(() => {
      let h = x0;
      for (let r = 0; r < 4; r++) h = add(h, silu(linear(h, w)));
      return h;
    }, [w]);
  });
  it("noGrad records nothing", () => {
    const w = randn([3], 25);
    const y = noGrad(() => mul(w, w));
    expect(y.requiresGrad).toBe(false);
    expect(y.node).toBeNull();
  });
  it("does not compute gradients of frozen inputs", () => {
    const w = randn([3], 26);
    const frozen = randn([3], 27, { requiresGrad: false });
    backward(sum(mul(w, frozen)));
    expect(Array.from(w.grad!)).toEqual(Array.from(frozen.data));
    expect(frozen.grad).toBeNull();
  });
});
