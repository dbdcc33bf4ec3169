import { describe, expect, it } from "vitest";
import { cudaBackend } from "./backend-ops.js";
import { type CudaPrecision, parseCudaPrecision } from "./precision.js";
import { recordingDevice } from "./recording-device.js";

/** One linear forward and backward on a trainable weight, then an AdamW update. */
function step(precision: CudaPrecision) {
  const dev = recordingDevice();
  const { ctx, ops } = cudaBackend(dev, { precision });
  const w = ops.upload(new Float32Array(6 * 4), [6, 4], { persistent: true, requiresGrad: true });
  const m = ops.zeros([6, 4]);
  const v = ops.zeros([6, 4]);
  const c = { decay: 1, stepSize: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, sc2: 1 };
  const once = () => {
    const x = ops.upload(new Float32Array(5 * 4), [5, 4], { requiresGrad: true });
    const targets = ops.uploadInt(new Int32Array(5), [5]);
    const loss = ops.maskedMean(ops.ceRows(ops.linear(x, w), targets), targets);
    ops.backward(loss, 1);
    ops.adamw(w, m, v, c);
    ops.zeroGrads([w]);
    ops.releaseTransients();
  };
  return { ctx, dev, w, m, v, once };
}

describe("precision bookkeeping", () => {
  it("fp32 and tf32 run their own GEMM kernel on fp32 operands, with no casts", () => {
    for (const [p, kernel] of [
      ["fp32", "gemm_f32"],
      ["tf32", "gemm_tf32"],
    ] as const) {
      const { ctx, once } = step(p);
      once();
      expect(ctx.castCount()).toBe(0);
      expect(ctx.launchCounts().get(kernel)).toBe(3); // y = x·Wᵀ, gx = g·W, gW = gᵀ·x
      expect(ctx.launchCounts().get("gemm_bf16")).toBeUndefined();
    }
  });

  it("bf16 casts a weight once per version and an activation once for its two products", () => {
    const { ctx, once, w, m, v } = step("bf16");
    once();
    // w (forward and gx share it), x (forward and gW share it), g (gx and gW share it)
    expect(ctx.castCount()).toBe(3);
    expect(ctx.launchCounts().get("gemm_bf16")).toBe(3);
    expect(ctx.launchCounts().get("gemm_f32")).toBeUndefined();
    // the update made a new version of w: the next step casts it again, once
    ctx.resetCounters();
    once();
    expect(ctx.castCount()).toBe(3);
    // master weights and the optimiser's moments stay fp32
    for (const t of [w, m, v]) expect(t.dtype).toBe("f32");
  });

  it("a weight not updated between two products is cast once for both", () => {
    const { ctx, w } = step("bf16");
    const x = ctx.empty([2, 4]);
    const y = ctx.empty([2, 6]);
    ctx.gemm({ transA: false, transB: true, M: 2, N: 6, K: 4, a: x, b: w, c: y });
    ctx.gemm({ transA: false, transB: true, M: 2, N: 6, K: 4, a: x, b: w, c: y });
    expect(ctx.castCount()).toBe(2);
  });

  it("runs GEMMs on cuBLASLt where the device has it, and a shape it refuses on the own kernel", () => {
    const calls: string[] = [];
    const withLt = {
      ...recordingDevice(),
      ltGemm: (g: { M: number; abType: number; compute: number }) => {
        if (g.M === 3) return false; // CUBLAS_STATUS_NOT_SUPPORTED
        calls.push(`${g.M} ${g.abType} ${g.compute}`);
        return true;
      },
    };
    const { ctx } = cudaBackend(withLt, { precision: "bf16" });
    const w = ctx.empty([6, 4], "f32", true);
    for (const M of [2, 3, 3]) {
      const x = ctx.empty([M, 4]);
      ctx.gemm({ transA: false, transB: true, M, N: 6, K: 4, a: x, b: w, c: ctx.empty([M, 6]) });
    }
    expect(calls).toEqual(["2 14 68"]); // bf16 operands, fp32 compute
    expect(ctx.launchCounts().get("gemm_lt")).toBe(1);
    expect(ctx.launchCounts().get("gemm_bf16")).toBe(2); // the refused shape, then remembered
  });

  it("lets any other cuBLASLt error through: a fault is never taken for a missing algorithm", () => {
    const faulty = {
      ...recordingDevice(),
      ltGemm: (): boolean => {
        throw new Error("cublasLtMatmul 2x6x4 failed: CUBLAS_STATUS_EXECUTION_FAILED (status 13)");
      },
    };
    const { ctx } = cudaBackend(faulty, { precision: "bf16" });
    const w = ctx.empty([6, 4], "f32", true);
    const x = ctx.empty([2, 4]);
    expect(() =>
      ctx.gemm({ transA: false, transB: true, M: 2, N: 6, K: 4, a: x, b: w, c: ctx.empty([2, 6]) }),
    ).toThrow("CUBLAS_STATUS_EXECUTION_FAILED");
    expect(ctx.launchCounts().get("gemm_bf16")).toBeUndefined();
  });

  it("parses the precision names and refuses others in one line", () => {
    expect(parseCudaPrecision("bf16")).toBe("bf16");
    expect(() => parseCudaPrecision("fp16")).toThrow(
      'precision must be one of fp32, tf32, bf16, got "fp16"',
    );
  });
});
