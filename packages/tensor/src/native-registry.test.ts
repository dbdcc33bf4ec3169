/**
 * The typed registry of native kernel sets: a registered set is what the ops call, unregistering
 * it brings back the portable kernels, and a misspelt group or kernel does not compile.
 */
import { afterEach, describe, expect, it } from "vitest";
import { kernelSet, nativeKernelNames, registerKernelSet } from "./native-registry.js";
import { silu } from "./ops/unary.js";
import { Tensor } from "./tensor.js";
import type { TensorKernelSet } from "./tensor-kernel-set.js";

/** A tensor set whose siluFwd writes 7 everywhere (and counts its calls); the rest throw. */
function fakeTensorSet(calls: { silu: number }): TensorKernelSet {
  const unused = () => {
    throw new Error("not part of this test");
  };
  return {
    sgemm: unused,
    siluFwd: (_x, y, _sig, n) => {
      calls.silu++;
      y.fill(7, 0, n);
    },
    siluBwd: unused,
    binarySame: unused,
    siluRowsFwd: unused,
    siluRowsBwd: unused,
    copyRows: unused,
    rmsnormFwd: unused,
    rmsnormBwd: unused,
    adamw: unused,
    ceFwd: unused,
    ceBwd: unused,
    embeddingBwd: unused,
  };
}

const x = () => new Tensor(Float32Array.from([-2, -0.5, 0, 1.5]), [4]);

describe("native kernel sets", () => {
  afterEach(() => registerKernelSet("tensor", null));

  it("runs the portable kernels when no set is registered", () => {
    expect(kernelSet("tensor")).toBeUndefined();
    expect(nativeKernelNames()).toEqual([]);
    const y = silu(x()).data;
    expect(y[3]).toBeCloseTo(1.5 / (1 + Math.exp(-1.5)), 6);
  });

  it("routes the ops to a registered set, and back when it is unregistered", () => {
    const portable = Array.from(silu(x()).data);
    const calls = { silu: 0 };
    registerKernelSet("tensor", fakeTensorSet(calls));
    expect(Array.from(silu(x()).data)).toEqual([7, 7, 7, 7]);
    expect(calls.silu).toBe(1);
    expect(nativeKernelNames()).toContain("tensor/siluFwd");
    expect(nativeKernelNames()).toHaveLength(13);
    registerKernelSet("tensor", null);
    expect(kernelSet("tensor")).toBeUndefined();
    expect(nativeKernelNames()).toEqual([]);
    expect(Array.from(silu(x()).data)).toEqual(portable);
    expect(calls.silu).toBe(1);
  });

  it("checks groups and kernels at compile time", () => {
    // (each line below fails to compile without its directive; `pnpm typecheck` checks that)
    // @ts-expect-error: no such group
    expect(kernelSet("tensr")).toBeUndefined();
    // @ts-expect-error: no such kernel in the tensor set
    expect(kernelSet("tensor")?.siluForward).toBeUndefined();
    // @ts-expect-error: a set must hold every kernel of its group
    registerKernelSet("tensor", { siluFwd: () => {} });
    expect(nativeKernelNames()).toEqual(["tensor/siluFwd"]);
  });
});
