import { gpuForTests } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { backwardGpu } from "../backward.js";
import { gpuParameter, releaseTransients, transientCount, uploadTensor } from "../gpu-tensor.js";
import { defineKernel } from "../kernel-def.js";
import { add, scale } from "./elementwise.js";
import { axpby, fillTensor } from "./elementwise-plain.js";
import { reshape } from "./shape.js";

const ctx = await gpuForTests("webgpu elementwise");

describe.runIf(ctx)("webgpu elementwise ops and the tape", () => {
  it("adds, scales and fills, including sizes that need a folded grid", async () => {
    const n = 70_000 * 4; // > 65535 groups of 256 would not fold; this checks the tail
    const a = new Float32Array(n).map((_, i) => i % 97);
    const b = new Float32Array(n).map((_, i) => (i % 13) - 6);
    const ta = uploadTensor(ctx!, a, [n]);
    const tb = uploadTensor(ctx!, b, [n]);
    const sum = await add(ta, tb).read();
    const mix = await axpby(2, ta, -0.5, tb).read();
    const s = await scale(ta, 3).read();
    for (let i = 0; i < n; i += 997) {
      expect(sum[i]).toBe(a[i]! + b[i]!);
      expect(mix[i]).toBe(2 * a[i]! - 0.5 * b[i]!);
      expect(s[i]).toBe(3 * a[i]!);
    }
    expect(sum[n - 1]).toBe(a[n - 1]! + b[n - 1]!);
    expect(await fillTensor(ctx!, [5], 2.5).read()).toEqual(new Float32Array(5).fill(2.5));
    releaseTransients(ctx!);
    expect(transientCount(ctx!)).toBe(0);
  });

  it("sums the gradients of a leaf over every use, on the device", async () => {
    const w = gpuParameter(ctx!, new Float32Array([1, 2, 3]), [3], "w");
    // loss-like chain: y = 2w + 3w + w  ⇒ dy/dw = 6 (seeded with ones)
    const y = add(add(scale(w, 2), scale(w, 3)), w);
    backwardGpu(y, fillTensor(ctx!, [3], 1));
    expect(await w.grad!.read()).toEqual(new Float32Array([6, 6, 6]));
    // A second backward accumulates into the same persistent gradient.
    backwardGpu(scale(w, 0.5), fillTensor(ctx!, [3], 1));
    expect(await w.grad!.read()).toEqual(new Float32Array([6.5, 6.5, 6.5]));
    releaseTransients(ctx!);
    expect(w.grad!.released).toBe(false);
    w.dispose();
  });

  it("names the problem on bad input", () => {
    const a = uploadTensor(ctx!, new Float32Array(3), [3]);
    const b = uploadTensor(ctx!, new Float32Array(4), [4]);
    expect(() => add(a, b)).toThrow(/shapes \[3\] and \[4\] differ/);
    expect(() => uploadTensor(ctx!, new Float32Array(3), [2, 2])).toThrow(
      /3 values do not fill shape \[2,2\]/,
    );
    releaseTransients(ctx!);
  });
});

describe.runIf(ctx)("webgpu reshape", () => {
  it("views the same buffer and reshapes the gradient back", async () => {
    const w = gpuParameter(ctx!, new Float32Array([1, 2, 3, 4, 5, 6]), [2, 3], "w");
    const v = reshape(w, [3, 2]);
    expect(v.shape).toEqual([3, 2]);
    expect(await v.read()).toEqual(new Float32Array([1, 2, 3, 4, 5, 6]));
    backwardGpu(scale(v, 2), fillTensor(ctx!, [3, 2], 1));
    expect(w.grad!.shape).toEqual([2, 3]);
    expect(await w.grad!.read()).toEqual(new Float32Array(6).fill(2));
    expect(() => reshape(w, [4])).toThrow(/has 6 elements, \[4\] needs 4/);
    releaseTransients(ctx!);
    w.dispose();
  });
});

describe.runIf(ctx)("webgpu kernel compile errors", () => {
  it("make the next read fail naming the kernel, instead of returning stale values", async () => {
    const broken = defineKernel({
      name: "broken-on-purpose",
      params: { n: "u32" },
      buffers: { out: "rw" },
      body: "@compute @workgroup_size(1) fn main() { out[0] = undefined_name; }",
    });
    const t = uploadTensor(ctx!, new Float32Array([1]), [1]);
    ctx!.run(broken, { out: t.buffer }, { n: 1 }, [1]);
    await expect(t.read()).rejects.toThrow(
      /kernel broken-on-purpose does not compile: .*undefined_name/,
    );
    releaseTransients(ctx!);
  });
});
