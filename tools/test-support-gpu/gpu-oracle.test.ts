import { describe, expect, it } from "vitest";
import { expectClose } from "./gpu-oracle.js";

describe("expectClose (the WebGPU oracle's comparison)", () => {
  const cpu = Float32Array.of(2.5, -1.25, 3e-5, 0);

  it("accepts float32 reordering noise: rtol·|cpu| on large values, the atol floor near zero", async () => {
    const gpu = Float32Array.of(2.5 * (1 + 5e-5), -1.25, 3e-5 + 2e-6, -3e-6);
    await expectClose(gpu, cpu, "noise");
  });

  it("fails a small element with the wrong sign, which |diff| ≤ tol·(1 + |cpu|) let through", async () => {
    const gpu = Float32Array.of(2.5, -1.25, -3e-5, 0);
    await expect(expectClose(gpu, cpu, "flipped")).rejects.toThrow(
      /flipped: at 2 gpu -0\.0000299\d* vs cpu 0\.0000299\d* \(\|diff\| 6\.00e-5 > atol 0\.000005 \+ rtol 0\.0001·\|cpu\|\)/,
    );
  });

  it("takes an explicit atol and rtol, and a lone NaN always fails", async () => {
    const gpu = Float32Array.of(2.5, -1.25, 3e-5 + 2e-6, 0);
    await expect(expectClose(gpu, cpu, "tight", { atol: 1e-7, rtol: 1e-6 })).rejects.toThrow(
      /tight: at 2 /,
    );
    await expect(
      expectClose(Float32Array.of(2.5, Number.NaN, 3e-5, 0), cpu, "nan"),
    ).rejects.toThrow(/nan: at 1 gpu NaN/);
    await expectClose(Float32Array.of(Number.NaN), Float32Array.of(Number.NaN), "both NaN");
  });
});
