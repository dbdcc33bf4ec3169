/** The report's GPU/CPU ratios and its Markdown: what a reader looks for is there. */
import { describe, expect, it } from "vitest";
import { type BenchTable, dispatchFigures } from "./bench-output.js";
import { type Report, ratios, renderMarkdown } from "./report.js";

const matmul: BenchTable = {
  bench: "matmul",
  title: "C = op(A)·op(B)",
  columns: ["M×K×N", "layout", "webgpu GFLOP/s", "% GPU peak", "webgpu/native"],
  rows: [
    {
      "M×K×N": "4096×4096×4096",
      layout: "A·B",
      "webgpu GFLOP/s": 21000,
      "% GPU peak": 31.3,
      "webgpu/native": "",
    },
    {
      "M×K×N": "1024×1024×1024",
      layout: "A·Bᵀ",
      "webgpu GFLOP/s": 9000,
      "% GPU peak": 13.4,
      "webgpu/native": 47.5,
    },
  ],
};
const model: BenchTable = {
  bench: "model",
  title: "training step",
  columns: [
    "config",
    "webgpu ms",
    "webgpu/native",
    "dispatches/step",
    "Mamba-2 disp/layer-app",
    "attn disp/layer-app",
    "bind groups/step",
    "µs encode/dispatch",
  ],
  rows: [
    {
      config: "2: mamba 4⊗6 D128 32×128",
      "webgpu ms": 12.5,
      "webgpu/native": 23.1,
      "dispatches/step": 1653,
      "Mamba-2 disp/layer-app": 67.5,
      "attn disp/layer-app": 60.2,
      "bind groups/step": 0,
      "µs encode/dispatch": 4.1,
    },
  ],
};

function report(over: Partial<Report> = {}): Report {
  return {
    tool: "pnpm gpu-check",
    ok: false,
    startedAt: "2026-12-01T17:00:00.000Z",
    command: "pnpm gpu-check",
    commit: "abc1234",
    verdict: "gpu",
    problems: [],
    warnings: [],
    adapter: null,
    adapters: [],
    enumerated: [],
    system: {
      vulkanLoader: "/lib/x86_64-linux-gnu/libvulkan.so.1",
      icdFiles: ["/usr/share/vulkan/icd.d/nvidia_icd.json"],
      icdOverride: null,
      nvidia: null,
      nvidiaDriverCapabilities: null,
      vkIcdFilenamesForChildren: "/usr/share/vulkan/icd.d/nvidia_icd.json",
    },
    cpu: {
      model: "AMD EPYC 9654",
      cores: 16,
      flags: ["avx2", "fma", "avx512f"],
      loadAverage: { start: 0.5, end: 3.2 },
    },
    suites: [
      {
        name: "ops",
        what: "ops",
        files: 24,
        passed: 300,
        failed: 0,
        skipped: 0,
        failures: [],
        ok: true,
        seconds: 60,
        log: "x",
      },
      {
        name: "training",
        what: "training",
        files: 1,
        passed: 5,
        failed: 1,
        skipped: 0,
        failures: ["packages/webgpu/src/train/gpu-step-engine.test.ts › follows the loss curve"],
        ok: false,
        seconds: 60,
        log: "x",
      },
    ],
    bench: null,
    phases: [{ name: "adapters", seconds: 1.2 }],
    wallClockS: 300,
    budgetS: 540,
    ...over,
  };
}

describe("gpu-check report", () => {
  it("collects every GPU/CPU ratio with its case, skipping empty cells", () => {
    expect(ratios([matmul, model])).toEqual([
      { bench: "matmul", case: "1024×1024×1024 A·Bᵀ", column: "webgpu/native", value: 47.5 },
      { bench: "model", case: "2: mamba 4⊗6 D128 32×128", column: "webgpu/native", value: 23.1 },
    ]);
  });

  it("says FAILED, lists each suite and the failing test", () => {
    const md = renderMarkdown(report());
    expect(md).toMatch(/^# GPU check: FAILED/);
    expect(md).toContain("| ops | ops | 24 | 300 | 0 | 0 | pass | 60.0 s |");
    expect(md).toContain("| training | training | 1 | 5 | 1 | 0 | FAIL | 60.0 s |");
    expect(md).toContain(
      "- training: packages/webgpu/src/train/gpu-step-engine.test.ts › follows the loss curve",
    );
    expect(md).toContain("AMD EPYC 9654, 16 logical CPUs; SIMD: avx2, fma, avx512f");
    expect(md).toContain("wall-clock: 5.0 min");
  });

  it("shows the peak, the fastest GEMM, the ratios and each table", () => {
    const md = renderMarkdown(
      report({
        ok: true,
        suites: [],
        bench: {
          command: "pnpm --silent bench matmul model --backend webgpu --threads=2",
          ok: true,
          failures: [],
          seconds: 200,
          log: "bench.log",
          gpuPeak: { gflops: 67000, source: "given with --gpu-peak-gflops" },
          bestGemm: { shape: "4096×4096×4096", layout: "A·B", gflops: 21000, pctPeak: 31.3 },
          cpuPeaks: [{ threads: 2, gflops: 179, source: "measured" }],
          machine: "AMD EPYC 9654; 16 cores",
          tables: [matmul, model],
          ratios: ratios([matmul, model]),
          dispatches: dispatchFigures([matmul, model]),
        },
      }),
    );
    expect(md).toMatch(/^# GPU check: passed/);
    expect(md).toContain("- GPU fp32 peak: 67000 GFLOP/s (given with --gpu-peak-gflops)");
    expect(md).toContain(
      "- fastest GEMM: 4096×4096×4096 A·B, 21000 GFLOP/s (31.3 % of the GPU peak)",
    );
    expect(md).toContain("| model | 2: mamba 4⊗6 D128 32×128 | webgpu/native | 23.1 |");
    expect(md).toContain("| 2: mamba 4⊗6 D128 32×128 | 1653 | 67.5 | 60.2 | 0 | 4.1 |");
    expect(md).toContain("### model: training step");
    expect(md).toContain("| 1024×1024×1024 | A·Bᵀ | 9000 | 13.4 | 47.5 |");
  });
});
