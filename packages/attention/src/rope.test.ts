import { readFileSync } from "node:fs";
import { backward, gradcheck, type Tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { expectGolden, goldenPath, loadGolden } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { rope, ropeInPlace } from "./rope.js";

function fromGolden(t: { data: Float32Array; shape: number[] }): Tensor {
  const x = randn(t.shape, 0);
  x.data.set(t.data);
  return x;
}

describe("rope", () => {
  it("matches the golden vectors (kernels/rope)", () => {
    const g = loadGolden("kernels", "rope.safetensors");
    const { settings } = JSON.parse(readFileSync(goldenPath("kernels", "rope.json"), "utf8")) as {
      settings: { theta: number; layout: string; position_offset: number };
    };
    expect(settings.layout).toBe("rotate-half");
    const x = fromGolden(g.get("x")!);
    const y = rope(x, { theta: settings.theta, offset: settings.position_offset });
    expectGolden("y", y.data, g.get("y")!.data, "forward");
    backward([y], [g.get("dy")!.data]);
    expectGolden("grad.x", x.grad!, g.get("grad.x")!.data, "grad");
  });

  it("rotates pair (i, i + hd/2) by p·θ_i", () => {
    const x = randn([1, 3, 1, 4], 1, { requiresGrad: false });
    const y = rope(x, { theta: 100, offset: 5 });
    for (let t = 0; t < 3; t++) {
      for (let i = 0; i < 2; i++) {
        const a = (5 + t) * 100 ** (-i / 2);
        const x1 = x.data[t * 4 + i]!;
        const x2 = x.data[t * 4 + i + 2]!;
        expect(y.data[t * 4 + i]).toBeCloseTo(x1 * Math.cos(a) - x2 * Math.sin(a), 5);
        expect(y.data[t * 4 + i + 2]).toBeCloseTo(x2 * Math.cos(a) + x1 * Math.sin(a), 5);
      }
    }
  });

  it("with an offset equals the tail of a longer sequence", () => {
    const x = randn([2, 6, 3, 8], 2, { requiresGrad: false });
    const full = rope(x, { theta: 500 });
    const tail = randn([2, 2, 3, 8], 0, { requiresGrad: false });
    for (let b = 0; b < 2; b++)
      tail.data.set(x.data.subarray((b * 6 + 4) * 24, (b * 6 + 6) * 24), b * 48);
    const y = rope(tail, { theta: 500, offset: 4 });
    for (let b = 0; b < 2; b++) {
      const want = full.data.subarray((b * 6 + 4) * 24, (b * 6 + 6) * 24);
      expect(Array.from(y.data.subarray(b * 48, b * 48 + 48))).toEqual(Array.from(want));
    }
    const inPlace = tail.data.slice();
    ropeInPlace(inPlace, [2, 2, 3, 8], 500, 4);
    expect(Array.from(inPlace)).toEqual(Array.from(y.data));
  });

  it("gradient (finite differences)", () => {
    const x = randn([2, 5, 2, 6], 3);
    gradcheck(() => rope(x, { theta: 10, offset: 3 }), [x]);
  });

  it("rejects an odd head_dim, naming it", () => {
    const x = randn([1, 2, 1, 5], 4);
    expect(() => rope(x)).toThrow(/head_dim.*even.*5/);
    expect(() => rope(randn([2, 4], 5))).toThrow(/\[B, T, H, head_dim\].*\[2,4\]/);
    expect(() => rope(randn([1, 2, 1, 4], 6), { offset: -1 })).toThrow(/offset.*-1/);
  });
});
