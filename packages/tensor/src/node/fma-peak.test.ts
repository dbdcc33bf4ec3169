import { describe, expect, it } from "vitest";
import { measureFmaPeak } from "./fma-peak.js";

describe("measureFmaPeak", () => {
  it("measures a positive finite peak on the native build, or says why not", async () => {
    for (const threads of [1, 2]) {
      const p = await measureFmaPeak(threads, { runMs: 2, repeats: 1 });
      if (!p.ok) {
        expect(p.error.length).toBeGreaterThan(0);
        continue;
      }
      expect(p.threads).toBe(threads);
      expect(Number.isFinite(p.gflops) && p.gflops > 0).toBe(true);
      expect(["avx512f", "avx2+fma", "neon", "generic"]).toContain(p.isa);
    }
  });

  it("rejects a thread count that is not a positive integer", async () => {
    await expect(measureFmaPeak(0)).rejects.toThrow(/threads must be a positive integer, got 0/);
    await expect(measureFmaPeak(1.5)).rejects.toThrow(/got 1.5/);
  });
});
