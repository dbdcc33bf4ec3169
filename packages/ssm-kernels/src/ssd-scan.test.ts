import { backward, gradcheck, Rng, Tensor } from "@loop/tensor";
import { randu } from "@loop/tensor/internal";
import { expectGolden, loadGolden } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { relErr, type ScanInputs, scanInputs } from "./helpers.test-util.js";
import { addDSkip } from "./mamba2-ops.js";
import { ssdScanChunked } from "./ssd-scan-chunked.js";
import { type SsdScanResult, ssdScanRef } from "./ssd-scan-ref.js";

type ScanFn = (inp: ScanInputs) => SsdScanResult;
const ref: ScanFn = (i) => ssdScanRef(i.x, i.dt, i.A, i.B, i.C, { initialState: i.s0 });
const chunked =
  (chunkSize: number): ScanFn =>
  (i) =>
    ssdScanChunked(i.x, i.dt, i.A, i.B, i.C, { initialState: i.s0, chunkSize });

function leaves(i: ScanInputs): Tensor[] {
  return i.s0 ? [i.x, i.dt, i.A, i.B, i.C, i.s0] : [i.x, i.dt, i.A, i.B, i.C];
}

/** Outputs and input gradients of sum(y⊙gy) + sum(state⊙gs) for random gy, gs. */
function run(fn: ScanFn, inp: ScanInputs, seed: number) {
  for (const t of leaves(inp)) t.grad = null;
  const { y, state } = fn(inp);
  const rng = new Rng(seed);
  const gy = rng.fillUniform(new Float32Array(y.size), -1, 1);
  const gs = rng.fillUniform(new Float32Array(state.size), -1, 1);
  backward([y, state], [gy, gs]);
  return { y: y.data, state: state.data, grads: leaves(inp).map((t) => t.grad!) };
}

describe("ssd scan: chunked vs sequential reference", () => {
  const names = ["x", "dt", "A", "B", "C", "initialState"];
  for (const G of [1, 2]) {
    for (const withState of [false, true]) {
      it(`agrees for chunk sizes 1, 3, 8, 16, 64 (G=${G}, initial state: ${withState})`, () => {
        const dims = { batch: 2, T: 37, H: 4, P: 5, G, N: 6 };
        const inp = scanInputs(dims, 10 * G + (withState ? 1 : 0), withState);
        const want = run(ref, inp, 99);
        for (const L of [1, 3, 8, 16, 64]) {
          const got = run(chunked(L), inp, 99);
          expect(relErr(got.y, want.y), `y, L=${L}`).toBeLessThan(1e-5);
          expect(relErr(got.state, want.state), `state, L=${L}`).toBeLessThan(1e-5);
          got.grads.forEach((g, k) => {
            expect(relErr(g, want.grads[k]!), `grad ${names[k]}, L=${L}`).toBeLessThan(1e-5);
          });
        }
      });
    }
  }

  it("handles T shorter than one chunk and T = 1", () => {
    for (const T of [1, 5]) {
      const inp = scanInputs({ batch: 1, T, H: 2, P: 3, G: 1, N: 4 }, 40 + T, true);
      const want = run(ref, inp, 7);
      const got = run(chunked(16), inp, 7);
      expect(relErr(got.y, want.y)).toBeLessThan(1e-5);
      got.grads.forEach((g, k) => {
        expect(relErr(g, want.grads[k]!)).toBeLessThan(1e-5);
      });
    }
  });

  it("passes gradients through the final state only", () => {
    const inp = scanInputs({ batch: 1, T: 11, H: 2, P: 3, G: 1, N: 4 }, 77, true);
    const outs = [ref, chunked(4)].map((fn) => {
      for (const t of leaves(inp)) t.grad = null;
      const { state } = fn(inp);
      backward(state, [new Rng(3).fillUniform(new Float32Array(state.size), -1, 1)]);
      return leaves(inp).map((t) => Float32Array.from(t.grad!));
    });
    outs[1]!.forEach((g, k) => {
      expect(relErr(g, outs[0]![k]!)).toBeLessThan(1e-5);
    });
  });
});

describe("ssd scan: finite differences", () => {
  const cases: [string, ScanFn][] = [
    ["reference", ref],
    ["chunked L=3", chunked(3)],
  ];
  for (const [name, fn] of cases) {
    for (const withState of [false, true]) {
      it(`${name} (G=2, initial state: ${withState})`, () => {
        const inp = scanInputs({ batch: 1, T: 7, H: 2, P: 2, G: 2, N: 3 }, 5, withState);
        gradcheck(() => {
          const o = fn(inp);
          return [o.y, o.state];
        }, leaves(inp));
      });
    }
  }
});

describe("ssd scan: golden vectors (kernels/ssd-scan)", () => {
  const gold = loadGolden("kernels", "ssd-scan.safetensors");
  const get = (n: string) => gold.get(n)!;
  const cases: [string, ScanFn][] = [
    ["reference", ref],
    ["chunked L=16", chunked(16)],
    ["chunked L=64", chunked(64)],
  ];
  for (const [name, fn] of cases) {
    it(`${name} matches y and every gradient`, () => {
      const t = (n: string) => new Tensor(Float32Array.from(get(n).data), get(n).shape, true);
      const inp = { x: t("x"), dt: t("dt"), A: t("A"), B: t("B"), C: t("C"), s0: null };
      const { y } = fn(inp);
      expectGolden("y", y.data, get("y").data, "forward");
      backward(y, [get("dy").data]);
      for (const n of ["x", "dt", "A", "B", "C"] as const) {
        expectGolden(`grad.${n}`, inp[n].grad!, get(`grad.${n}`).data, "grad");
      }
    });
  }
});

describe("ssd scan: the fused D skip", () => {
  it("equals addDSkip after the scan, outputs and every gradient (∂D included)", () => {
    const inp = scanInputs({ batch: 2, T: 19, H: 4, P: 3, G: 2, N: 5 }, 41, true);
    const D = randu([4], 42, 0.5, 1.5);
    const rng = new Rng(43);
    const gy = rng.fillUniform(new Float32Array(2 * 19 * 4 * 3), -1, 1);
    const grads = (f: () => SsdScanResult) => {
      for (const t of [...leaves(inp), D]) t.grad = null;
      const o = f();
      backward([o.y, o.state], [gy, new Float32Array(o.state.size).fill(0.5)]);
      return [o.y.data, o.state.data, ...[...leaves(inp), D].map((t) => t.grad!)].map((a) =>
        Float32Array.from(a),
      );
    };
    const opts = { initialState: inp.s0, chunkSize: 8 };
    const fused = grads(() => ssdScanChunked(inp.x, inp.dt, inp.A, inp.B, inp.C, { ...opts, D }));
    const composed = grads(() => {
      const o = ssdScanChunked(inp.x, inp.dt, inp.A, inp.B, inp.C, opts);
      return { y: addDSkip(o.y, inp.x, D), state: o.state };
    });
    for (const [i, g] of fused.entries())
      expect(relErr(g, composed[i]!), `output ${i}`).toBeLessThan(1e-6);
  });

  it("passes a finite-difference check, ∂D included", () => {
    const inp = scanInputs({ batch: 1, T: 7, H: 2, P: 2, G: 1, N: 3 }, 7, false);
    const D = randu([2], 8, 0.5, 1.5);
    gradcheck(() => {
      const o = ssdScanChunked(inp.x, inp.dt, inp.A, inp.B, inp.C, { chunkSize: 3, D });
      return [o.y, o.state];
    }, [...leaves(inp), D]);
  });

  it("rejects a D of the wrong shape", () => {
    const inp = scanInputs({ batch: 1, T: 4, H: 2, P: 2, G: 1, N: 3 }, 9, false);
    expect(() =>
      ssdScanChunked(inp.x, inp.dt, inp.A, inp.B, inp.C, { D: randu([3], 1, 0, 1) }),
    ).toThrow("ssdScanChunked: D must be [2], got [3]");
  });
});
