/**
 * Training on the CUDA backend (where an NVIDIA GPU is; elsewhere skipped with one printed
 * line): 30 steps of a small hybrid model through @loop/train's deviceStepEngine, fp32 against
 * the same engine on cpuBackendOps (the same losses to float32 rounding of another summation
 * order), and bf16 GEMM operands against fp32 (the loss curve within 1 % at every step).
 */
import { cpuBackendOps, type ModelConfigInput } from "@loop/looped";
import { cudaSuiteRuns } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { startBackend } from "./backend.js";
import { trainLosses } from "./cuda/train-losses.js";

const CONFIG: ModelConfigInput = {
  vocab_size: 61,
  d_model: 64,
  n_layers: 2,
  n_loops: 2,
  backbone: "hybrid",
  attn_layers: [1],
  ssm: { d_state: 16, headdim: 16, chunk_size: 16 },
  attention: { n_heads: 4, n_kv_heads: 2 },
};

async function start() {
  try {
    return { ok: true as const, backend: await startBackend("cuda", () => {}) };
  } catch (e) {
    return { ok: false as const, error: (e as Error).message };
  }
}

const fp32 = await start();
describe.runIf(cudaSuiteRuns("cuda training", fp32))("training on cuda", () => {
  it("fp32 follows the CPU's loss curve; bf16 stays within 1 % of fp32 for 30 steps", async () => {
    if (!fp32.ok) return;
    const cpu = await trainLosses(cpuBackendOps, CONFIG, 30, 4, 32);
    const gpu = await trainLosses(fp32.backend.ops, CONFIG, 30, 4, 32);
    for (const [k, l] of cpu.entries())
      expect(Math.abs(gpu[k]! - l), `step ${k}: cuda ${gpu[k]} cpu ${l}`).toBeLessThan(
        2e-3 * (1 + l),
      );
    expect(cpu.at(-1)!).toBeLessThan(cpu[0]! * 0.8); // it learns
    const half = await trainLosses(fp32.backend.opsAt("bf16"), CONFIG, 30, 4, 32);
    fp32.backend.stop();
    console.log(`cuda losses: fp32 ${gpu.map((l) => l.toFixed(4)).join(" ")}`);
    console.log(`cuda losses: bf16 ${half.map((l) => l.toFixed(4)).join(" ")}`);
    for (const [k, l] of gpu.entries())
      expect(Math.abs(half[k]! - l) / l, `step ${k}`).toBeLessThan(0.01);
  }, 600_000);
});
