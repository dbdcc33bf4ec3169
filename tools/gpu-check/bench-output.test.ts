/** The bench's printed lines read back: header lines, tables cut at the rule, failures. */
import { describe, expect, it } from "vitest";
import { bestGemm, dispatchFigures, isRatioColumn, parseBenchOutput } from "./bench-output.js";

// What `pnpm bench matmul attention --backend webgpu --quick` printed on SwiftShader (cut down).
const PRINTED = `node v20.20.2 · AMD EPYC (AuthenticAMD family 25 model 1; avx2 fma) · 2 cores · load average 9.34
fp32 peak, 1 thread(s): 95 GFLOP/s (measured: FMA loop, avx2+fma build, flops per thread CPU-second, best of 10)
fp32 peak, 2 thread(s): 179 GFLOP/s (measured: FMA loop, avx2+fma build, flops per thread CPU-second, best of 10)
native builds -march=native · portable gemm wasm-simd×1 (benchmarks that measure native kernels say so)
webgpu adapter: google swiftshader swiftshader-device-subzero- SwiftShader driver 5.0.0
webgpu driver: SwiftShader driver 5.0.0
webgpu fp32 peak: 1 GFLOP/s (measured: WGSL FMA loop, 1048576 threads × 16 iterations, best of 5)
WARNING: this adapter is a CPU emulation of a GPU (SwiftShader/lavapipe): the webgpu figures below measure the emulator on this CPU, not a GPU; only correctness counts here

=== attention (webgpu): causal GQA attention forward + backward vs eager PyTorch; peak memory as T grows

causal GQA attention forward + backward on SwiftShader and the CPU kernels; medians
B,T,Hq,Hkv,hd  webgpu ms  webgpu tok/s  webgpu GFLOP/s  % GPU peak  native 2T ms  native tok/s  native GFLOP/s  webgpu/native
-------------  ---------  ------------  --------------  ----------  ------------  ------------  --------------  -------------
1,64,2,2,16         35.7          1791          0.0257        2.86          20.5          3123          0.0448          0.574
(CPU: AMD EPYC (AuthenticAMD family 25 model 1; avx2 fma); native builds -march=native)
(attention took 16.5 s)

=== matmul (webgpu): GEMM GFLOP/s (M,K,N model shapes): wasm-simd and js kernels on 1..n threads vs PyTorch

C = op(A)·op(B) in float32 on SwiftShader; medians; webgpu/native > 1 means the GPU is faster
M×K×N        layout  webgpu ms  webgpu GFLOP/s  % GPU peak  native 2T ms  native GFLOP/s  native % CPU peak  webgpu/native
-----------  ------  ---------  --------------  ----------  ------------  --------------  -----------------  -------------
256×128×128  A·B           662          0.0127        1.41           7.4            1.13              0.633         0.0112
256×128×128  A·Bᵀ          762           0.011        1.23          6.25            1.34               0.75         0.0082
512×512×512  Aᵀ·B          587          0.0143        1.59
(CPU: AMD EPYC (AuthenticAMD family 25 model 1; avx2 fma); native builds -march=native)
(matmul took 35.8 s)

=== ssd (webgpu): chunked SSD scan fwd+bwd

SSD scan, forward + backward
(B,T,H,P,N)     webgpu ms  webgpu tok/s  webgpu GFLOP/s  % GPU peak  native 2T ms  native tok/s  native GFLOP/s  webgpu/native
--------------  ---------  ------------  --------------  ----------  ------------  ------------  --------------  -------------
(1,64,2,16,16)        808            79         0.00243       0.271          0.45        142110            4.37       0.000557
(CPU: AMD EPYC (AuthenticAMD family 25 model 1; avx2 fma); native builds -march=native)
(ssd took 7.5 s)

=== model (webgpu): whole-model training step
benchmark model failed: Error: out of memory
`;

describe("gpu-check: the bench's output", () => {
  const out = parseBenchOutput(PRINTED);

  it("reads the adapter, driver, peaks and machine lines", () => {
    expect(out.adapter).toBe(
      "google swiftshader swiftshader-device-subzero- SwiftShader driver 5.0.0",
    );
    expect(out.driver).toBe("SwiftShader driver 5.0.0");
    expect(out.gpuPeak).toEqual({
      gflops: 1,
      source: "measured: WGSL FMA loop, 1048576 threads × 16 iterations, best of 5",
    });
    expect(out.machine).toBe(
      "AMD EPYC (AuthenticAMD family 25 model 1; avx2 fma); 2 cores; load average 9.34",
    );
    expect(out.cpuPeaks.map((p) => [p.threads, p.gflops])).toEqual([
      [1, 95],
      [2, 179],
    ]);
    expect(out.tookS).toEqual({ attention: 16.5, matmul: 35.8, ssd: 7.5 });
    expect(out.failed).toEqual(["model"]);
  });

  it("cuts each table at its rule, names with spaces and short rows included", () => {
    expect(out.tables.map((t) => [t.bench, t.rows.length])).toEqual([
      ["attention", 1],
      ["matmul", 3],
      ["ssd", 1],
    ]);
    const [attention, matmul] = out.tables;
    expect(attention!.title).toBe(
      "causal GQA attention forward + backward on SwiftShader and the CPU kernels; medians",
    );
    expect(attention!.rows[0]).toEqual({
      "B,T,Hq,Hkv,hd": "1,64,2,2,16",
      "webgpu ms": 35.7,
      "webgpu tok/s": 1791,
      "webgpu GFLOP/s": 0.0257,
      "% GPU peak": 2.86,
      "native 2T ms": 20.5,
      "native tok/s": 3123,
      "native GFLOP/s": 0.0448,
      "webgpu/native": 0.574,
    });
    expect(matmul!.rows[1]).toMatchObject({
      "M×K×N": "256×128×128",
      layout: "A·Bᵀ",
      "webgpu GFLOP/s": 0.011,
    });
    // a row without the CPU columns: empty cells
    expect(matmul!.rows[2]).toMatchObject({
      "M×K×N": "512×512×512",
      layout: "Aᵀ·B",
      "webgpu/native": "",
    });
    expect(matmul!.columns.filter(isRatioColumn)).toEqual(["webgpu/native"]);
    // a first cell in parentheses is a row; the "(CPU: …)" line under it is not
    expect(out.tables[2]!.rows).toEqual([
      expect.objectContaining({ "(B,T,H,P,N)": "(1,64,2,16,16)", "webgpu/native": 0.000557 }),
    ]);
  });

  it("finds the fastest GEMM", () => {
    expect(bestGemm(out.tables)).toEqual({
      shape: "512×512×512",
      layout: "Aᵀ·B",
      gflops: 0.0143,
      pctPeak: 1.59,
    });
  });

  it("reads the model table's dispatch columns", () => {
    const model = parseBenchOutput(MODEL_PRINTED);
    expect(dispatchFigures(model.tables)).toEqual([
      {
        config: "5: p-hop 1⊗4 D64 (phop-a4-n32-p4) 2×32",
        dispatchesPerStep: 311,
        mamba2PerLayerApplication: 70.8,
        attentionPerLayerApplication: 63.8,
        bindGroupsPerStep: 0,
        encodeUsPerDispatch: 6.52,
      },
    ]);
    // tables without the columns give none
    expect(dispatchFigures(out.tables)).toEqual([]);
  });
});

// The model table of `pnpm bench model --backend webgpu --quick` (cut down to some columns).
const MODEL_PRINTED = `=== model (webgpu): whole-model training step

training step = forward + backward + AdamW on SwiftShader and on the CPU kernels; medians
config                                  webgpu ms  webgpu tok/s  webgpu/native  dispatches/step  Mamba-2 disp/layer-app  attn disp/layer-app  bind groups/step  µs encode/dispatch
--------------------------------------  ---------  ------------  -------------  ---------------  ----------------------  -------------------  ----------------  ------------------
5: p-hop 1⊗4 D64 (phop-a4-n32-p4) 2×32      28900          2.21         0.0121              311                    70.8                 63.8                 0                6.52
(CPU: AMD EPYC (AuthenticAMD family 25 model 1; avx2 fma); native builds -march=native)
(model took 120.5 s)
`;
