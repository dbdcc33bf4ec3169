/**
 * Training steps on the CUDA backend over its host emulator (the same CUDA C kernels run on the
 * CPU): a tiny hybrid model (Mamba-2 and attention layers, looped) trained through @loop/train's
 * deviceStepEngine with clipping on, against the same engine on cpuBackendOps — the losses of
 * every step agree to float32 rounding, so the backward, the gradient norm, the clipping, the
 * step guard and the AdamW kernel compute what the CPU's do; with bf16 GEMM operands the losses
 * stay within 1 % of fp32's, and activation checkpointing (per loop step or per layer) changes
 * no loss. Skipped with one printed line
 * without a C++ compiler (a failure under CI).
 */
import { cudaBackend } from "@loop/cuda";
import { startEmulatedDevice } from "@loop/cuda/node";
import { cpuBackendOps, type ModelConfigInput } from "@loop/looped";
import { emulatorSuiteRuns } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { trainLosses } from "./cuda/train-losses.js";

const CONFIG: ModelConfigInput = {
  vocab_size: 11,
  d_model: 16,
  n_layers: 2,
  n_loops: 2,
  backbone: "hybrid",
  attn_layers: [1],
  ssm: { d_state: 4, headdim: 8, chunk_size: 4 },
  attention: { n_heads: 2, n_kv_heads: 1 },
};

const started = await startEmulatedDevice();
const runs = emulatorSuiteRuns("cuda training on the host emulator", started);

describe.runIf(runs)("training on cuda (host emulator)", () => {
  it("4 clipped steps give the CPU's losses", async () => {
    if (!started.ok) return;
    const cpu = await trainLosses(cpuBackendOps, CONFIG, 4, 2, 8);
    const emu = await trainLosses(cudaBackend(started.device).ops, CONFIG, 4, 2, 8);
    for (const [k, l] of cpu.entries())
      expect(Math.abs(emu[k]! - l), `step ${k}: cuda ${emu[k]} cpu ${l}`).toBeLessThan(
        2e-4 * (1 + l),
      );
    expect(new Set(cpu).size).toBe(4); // the steps changed the weights
  }, 600_000);

  it("activation checkpointing, per loop step or per layer, gives the same losses", async () => {
    if (!started.ok) return;
    const plain = await trainLosses(cudaBackend(started.device).ops, CONFIG, 3, 2, 8);
    for (const checkpointing of [true, "layer"] as const) {
      const ckpt = await trainLosses(cudaBackend(started.device).ops, CONFIG, 3, 2, 8, {
        checkpointing,
      });
      for (const [k, l] of plain.entries())
        expect(Math.abs(ckpt[k]! - l), `${checkpointing} step ${k}`).toBeLessThan(1e-6);
    }
  }, 600_000);

  it("bf16 GEMM operands stay within 1 % of fp32's losses", async () => {
    if (!started.ok) return;
    const fp32 = await trainLosses(cudaBackend(started.device).ops, CONFIG, 4, 2, 8);
    const bf16 = await trainLosses(
      cudaBackend(started.device, { precision: "bf16" }).ops,
      CONFIG,
      4,
      2,
      8,
    );
    for (const [k, l] of fp32.entries()) {
      expect(Math.abs(bf16[k]! - l) / l, `step ${k}`).toBeLessThan(0.01);
      if (k > 0) expect(bf16[k], `step ${k}: bf16 rounds`).not.toBe(l);
    }
  }, 600_000);
});
