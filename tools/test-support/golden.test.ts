import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compareGolden, expectGolden, goldenPath, loadKernelCase } from "./golden.js";

describe("golden comparison", () => {
  it("accepts values inside the docs/formats.md tolerance and rejects others", () => {
    expect(compareGolden("a", [1.0001], [1], "forward").ok).toBe(true);
    expect(compareGolden("a", [1.0003], [1], "forward").ok).toBe(false);
    expect(compareGolden("g", [1000.1], [1000], "grad").ok).toBe(true);
    expect(compareGolden("g", [Number.NaN], [1], "grad").ok).toBe(false);
    expect(compareGolden("g", [1, 2], [1], "grad").ok).toBe(false);
  });
});

describe("golden files (read here, not by @loop/tensor)", () => {
  const cases = readdirSync(goldenPath("kernels"))
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.slice(0, -".json".length));

  it.each(cases)("%s: every tensor its spec lists, with that shape and as many values", (name) => {
    const c = loadKernelCase(name);
    const listed = { ...c.spec.inputs, ...c.spec.output, ...c.spec.grads };
    expect(Object.keys(listed).length).toBeGreaterThan(0);
    for (const [n, shape] of Object.entries(listed)) {
      expect(c.get(n).shape, n).toEqual(shape);
      expect(c.get(n).data.length, n).toBe(shape.reduce((a, b) => a * b, 1));
    }
  });

  it("rope: y is the spec's formula of x (the values sit where the header says)", () => {
    const c = loadKernelCase("rope");
    const { theta, position_offset } = c.spec.settings as {
      theta: number;
      position_offset: number;
    };
    const x = c.get("x");
    const [B, T, H, hd] = x.shape as [number, number, number, number];
    const half = hd / 2;
    const y = new Float64Array(x.data.length);
    for (let b = 0; b < B; b++)
      for (let t = 0; t < T; t++)
        for (let h = 0; h < H; h++) {
          const o = ((b * T + t) * H + h) * hd;
          for (let i = 0; i < half; i++) {
            const angle = (t + position_offset) * theta ** ((-2 * i) / hd);
            const [x1, x2] = [x.data[o + i]!, x.data[o + i + half]!];
            y[o + i] = x1 * Math.cos(angle) - x2 * Math.sin(angle);
            y[o + i + half] = x1 * Math.sin(angle) + x2 * Math.cos(angle);
          }
        }
    expectGolden("rope y", y, c.get("y").data, "forward");
  });
});
