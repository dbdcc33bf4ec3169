import { describe, expect, it } from "vitest";
import { compareGolden, loadGolden } from "./golden.js";

describe("golden comparison", () => {
  it("accepts values inside the docs/formats.md tolerance and rejects others", () => {
    expect(compareGolden("a", [1.0001], [1], "forward").ok).toBe(true);
    expect(compareGolden("a", [1.0003], [1], "forward").ok).toBe(false);
    expect(compareGolden("g", [1000.1], [1000], "grad").ok).toBe(true);
    expect(compareGolden("g", [Number.NaN], [1], "grad").ok).toBe(false);
    expect(compareGolden("g", [1, 2], [1], "grad").ok).toBe(false);
  });
  it("finds and reads the golden files in testdata", () => {
    const t = loadGolden("kernels", "rope.safetensors");
    expect(t.size).toBeGreaterThan(0);
  });
});
