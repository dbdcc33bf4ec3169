/**
 * Mixed precision's kernels against their CPU oracles: the f16 rounding of GEMM operands (IEEE
 * binary16, round to nearest even, with the overflow edges written by hand) against `f16Round`,
 * and the GEMM on f16 operands against a float64 product of the f16-rounded operands (products
 * of two f16 values are exact in f32, so the only error left is f32 accumulation).
 *
 * Which storage runs: "packed" (two f16 per u32 word, core WGSL) is forced in every test, so it
 * is tested on every adapter; "native" (array<f16>, `enable f16;`) needs the adapter's
 * shader-f16 feature, which SwiftShader lacks, so the tests of "the adapter's storage" say in
 * their names which one ran (packed on SwiftShader, native on a GPU that has the feature).
 */

import { Rng } from "@loop/tensor";
import { gpuForTests } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { f16Round, halfValue, unpackHalves } from "../f16-round.test-util.js";
import { emptyLike, releaseTransients, uploadTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import { F16_CAST_GROUP, f16CastKernel } from "../kernels/f16-cast.js";
import { type F16Storage, gpuPrecision, hasFeature, setGpuPrecision } from "../precision.js";
import {
  magnitudes,
  operands,
  type Product,
  reference,
  runOnDevice,
  worstRatio,
} from "./gemm-cases.test-util.js";
import { linear, matmul } from "./matmul.js";

const ctx = await gpuForTests("webgpu mixed-precision GEMM");
const adapterStorage: F16Storage = ctx && hasFeature(ctx, "shader-f16") ? "native" : "packed";
const storages: F16Storage[] = adapterStorage === "native" ? ["packed", "native"] : ["packed"];

describe("f16Round, the CPU oracle's rounding", () => {
  it("rounds to nearest even at f16's spacing, saturates to ±inf at 65520, keeps subnormals", () => {
    expect(f16Round(1 + 2 ** -11)).toBe(1); // a tie: to the even 1
    expect(f16Round(1 + 3 * 2 ** -11)).toBe(1 + 2 ** -9); // a tie: to the even 1 + 2⁻⁹
    expect(f16Round(1 / 3)).toBe(halfValue(0x3555));
    expect(f16Round(65504)).toBe(65504);
    expect(f16Round(65519.99)).toBe(65504);
    expect(f16Round(65520)).toBe(Number.POSITIVE_INFINITY);
    expect(f16Round(-1e9)).toBe(Number.NEGATIVE_INFINITY);
    expect(f16Round(2 ** -24)).toBe(2 ** -24);
    expect(f16Round(3 * 2 ** -26)).toBe(2 ** -24);
  });
});

describe.runIf(ctx)("webgpu f16 operand rounding against the CPU oracle", () => {
  const edge = [
    0,
    -0,
    1,
    -1,
    1 / 3,
    -2 / 3,
    Math.PI,
    1 + 2 ** -11,
    1 + 3 * 2 ** -11,
    1e-3,
    6.1e-5,
    1234.567,
    65504,
    65519,
    -65519,
    65520,
    -65520,
    1e6,
    -1e30,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    Number.NaN,
  ];
  const rng = new Rng(5);
  const values = Float32Array.from([
    ...edge,
    ...Array.from({ length: 101 }, () => rng.normal(0, 30)),
  ]);
  // One kernel serves both storages: u32 words of two f16 are also the bytes of an array<f16>
  it("both operand ranges, from odd offsets", async () => {
    const src = uploadTensor(ctx!, values, [values.length]);
    // A from element 3, B from element 0 with an odd count: the last word's high half is 0
    const nA = values.length - 3;
    const nB = 7;
    const words = (n: number) => Math.ceil(n / 2);
    const outA = emptyLike(ctx!, [words(nA)]);
    const outB = emptyLike(ctx!, [words(nB)]);
    ctx!.run(
      f16CastKernel,
      { srcA: src.buffer, srcB: src.buffer, outA: outA.buffer, outB: outB.buffer },
      { offA: 3, nA, offB: 0, nB, wordsA: words(nA), wordsB: words(nB) },
      grid(words(nA) + words(nB), F16_CAST_GROUP),
    );
    const a = unpackHalves(new Uint32Array((await outA.read()).buffer), nA);
    const b = unpackHalves(new Uint32Array((await outB.read()).buffer), nB);
    const want = (from: number, n: number) =>
      Array.from(values.subarray(from, from + n), (v) => f16Round(v));
    expect(a).toEqual(want(3, nA));
    expect(b).toEqual(want(0, nB));
    expect((new Uint32Array((await outB.read()).buffer)[3]! >>> 16) & 0xffff).toBe(0);
    releaseTransients(ctx!);
  });
});

describe.runIf(ctx)("webgpu GEMM on f16 operands against the CPU oracle", () => {
  const cases: Omit<Product, "a" | "b">[] = [
    { M: 5, N: 7, K: 3, transA: false, transB: false, batch: 1 },
    { M: 67, N: 30, K: 37, transA: false, transB: true, batch: 1 },
    { M: 19, N: 66, K: 21, transA: true, transB: false, batch: 2 },
    { M: 9, N: 13, K: 17, transA: true, transB: true, batch: 1 },
    { M: 5, N: 7, K: 600, transA: false, transB: true, batch: 1 }, // split along K
  ];
  for (const storage of storages)
    for (const c of cases)
      it(`${storage} storage${storage === adapterStorage ? " (the adapter's)" : " (forced)"}: M=${c.M} N=${c.N} K=${c.K} transA=${c.transA} transB=${c.transB} batch=${c.batch}, odd offsets`, async () => {
        // odd element offsets and rows: the packed words straddle rows and entries
        const p: Product = { ...c, a: { off: 3, pad: 1 }, b: { off: 1, pad: 2 } };
        const o = operands(p, c.M + c.N * 7 + c.K);
        const got = await runOnDevice(ctx!, p, o, { operands: { f16: storage } });
        expect(got.plan.f16).toBe(storage);
        const want = reference(p, o, f16Round);
        const { ratio, at } = worstRatio(got.out, want, magnitudes(p, o), 1e-6);
        expect(ratio, `element ${at}: ${got.out[at]} vs ${want[at]}`).toBeLessThanOrEqual(1);
        // and the rounding mattered: against the fp32 product the same bound fails
        expect(worstRatio(got.out, reference(p, o), magnitudes(p, o), 1e-6).ratio).toBeGreaterThan(
          1,
        );
      });

  it(`matmul and linear under setGpuPrecision("mixed") (${adapterStorage} storage, the adapter's) round their operands`, async () => {
    const rng = new Rng(9);
    const data = (n: number) => Float32Array.from({ length: n }, () => rng.uniformIn(-1, 1));
    const [M, K, N] = [6, 10, 5];
    const x = data(M * K);
    const w = data(N * K);
    const bias = data(N);
    try {
      expect(setGpuPrecision(ctx!, "mixed").storage).toBe(adapterStorage);
      const X = uploadTensor(ctx!, x, [M, K]);
      const W = uploadTensor(ctx!, w, [N, K]);
      const y = await linear(X, W, uploadTensor(ctx!, bias, [N])).read();
      const z = await matmul(X, W, { transB: true }).read();
      for (let m = 0; m < M; m++)
        for (let n = 0; n < N; n++) {
          let s = 0;
          for (let k = 0; k < K; k++) s += f16Round(x[m * K + k]!) * f16Round(w[n * K + k]!);
          expect(Math.abs(z[m * N + n]! - s)).toBeLessThan(1e-6 * K);
          // the bias is added in f32
          expect(Math.abs(y[m * N + n]! - (s + bias[n]!))).toBeLessThan(1e-6 * K);
        }
    } finally {
      setGpuPrecision(ctx!, "fp32");
      releaseTransients(ctx!);
    }
    expect(gpuPrecision(ctx!).precision).toBe("fp32");
  });

  it("refuses native f16 storage on an adapter without shader-f16", () => {
    if (adapterStorage === "native") {
      expect(setGpuPrecision(ctx!, "mixed", { storage: "native" }).storage).toBe("native");
      setGpuPrecision(ctx!, "fp32");
      return;
    }
    expect(() => setGpuPrecision(ctx!, "mixed", { storage: "native" })).toThrow(
      /native f16 storage needs the adapter's shader-f16 feature/,
    );
  });
});
