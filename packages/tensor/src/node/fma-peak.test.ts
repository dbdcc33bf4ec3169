import { nativeBuildExpected } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { measureFmaPeak, nativeVectorIsa } from "./fma-peak.js";

describe("measureFmaPeak", () => {
  // It measures the native build: wherever a C compiler is installed that build must work (its
  // error is the failure message); elsewhere one printed line says why, a failure under CI.
  it.runIf(nativeBuildExpected("measureFmaPeak on the native build"))(
    "measures a positive finite peak on the native build",
    async () => {
      for (const threads of [1, 2]) {
        const p = await measureFmaPeak(threads, { runMs: 2, repeats: 1 });
        if (!p.ok) expect.fail(`the native build failed: ${p.error}`);
        expect(p.threads).toBe(threads);
        expect(Number.isFinite(p.gflops) && p.gflops > 0).toBe(true);
        expect(["avx512f", "avx2+fma", "neon", "generic"]).toContain(p.isa);
        // the build's instructions, as a study's seed record names them
        expect(await nativeVectorIsa()).toBe(p.isa);
      }
    },
  );

  it("rejects a thread count that is not a positive integer", async () => {
    await expect(measureFmaPeak(0)).rejects.toThrow(/threads must be a positive integer, got 0/);
    await expect(measureFmaPeak(1.5)).rejects.toThrow(/got 1.5/);
  });
});
