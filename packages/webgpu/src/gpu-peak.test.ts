/**
 * The GPU peak's FMA loop does the work it is credited with: every thread's result equals the
 * same chains run in f32 on the CPU (so no compiler dropped iterations), and a measurement
 * returns a positive figure.
 */

import { gpuForTests } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { fmaPeakReference, measureGpuPeak, runFmaPeak } from "./gpu-peak.js";

const ctx = await gpuForTests("webgpu fp32 peak");

describe.runIf(ctx)("GPU fp32 peak", () => {
  it("runs every iteration of every chain", async () => {
    const threads = 300; // not a multiple of the workgroup
    const iters = 37;
    const out = ctx!.allocBytes(threads * 4);
    runFmaPeak(ctx!, out, threads, iters);
    const got = new Float32Array(await ctx!.read(out, threads));
    ctx!.release(out);
    for (let i = 0; i < threads; i++) {
      const want = fmaPeakReference(i, iters, 0.999, 0.001);
      // fused vs separately rounded multiply-add: a few ulps over 37 steps
      expect(Math.abs(got[i]! - want)).toBeLessThan(1e-4 * Math.abs(want));
    }
  });

  it("measures a positive figure", async () => {
    const p = await measureGpuPeak(ctx!, { minMs: 5 });
    expect(p.gflops).toBeGreaterThan(0);
    expect(p.source).toMatch(/measured: WGSL FMA loop/);
  });
});
