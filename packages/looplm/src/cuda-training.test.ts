/**
 * Training on the CUDA backend (where an NVIDIA GPU is; elsewhere skipped with one printed
 * line): 30 steps of a small hybrid model through @loop/train's deviceStepEngine, fp32 against
 * the CPU's Trainer-equivalent engine on cpuBackendOps (the same losses to float32 rounding of
 * an ordering), and bf16 GEMM operands against fp32 (the loss curve within 1 % at every step).
 */
import { cpuBackendOps, LoopedModel, parseConfig } from "@loop/looped";
import type { BackendOps } from "@loop/tensor";
import { Rng } from "@loop/tensor";
import { cudaSuiteRuns } from "@loop/test-support";
import { deviceStepEngine, deviceTraining, resolveTrainOptions } from "@loop/train";
import { describe, expect, it } from "vitest";
import { startBackend } from "./backend.js";

const CONFIG = parseConfig({
  vocab_size: 61,
  d_model: 64,
  n_layers: 2,
  n_loops: 2,
  backbone: "hybrid",
  attn_layers: [1],
  ssm: { d_state: 16, headdim: 16, chunk_size: 16 },
  attention: { n_heads: 4, n_kv_heads: 2 },
});
const o = resolveTrainOptions({ lr: 3e-3, warmupSteps: 0 });

/** The losses of `steps` steps on `ops`, from the same weights and batches. */
async function losses<T, I>(ops: BackendOps<T, I>, steps = 30): Promise<number[]> {
  const model = new LoopedModel(CONFIG, { seed: 0 });
  const engine = deviceStepEngine(deviceTraining(model, ops, o), o);
  const rng = new Rng(1);
  const out: number[] = [];
  try {
    for (let s = 0; s < steps; s++) {
      // a learnable stream: each token is the previous one plus 1 (mod V), with noise
      const tokens = new Int32Array(4 * 32);
      for (let k = 0; k < tokens.length; k++)
        tokens[k] = k % 32 === 0 || rng.uniform() < 0.1 ? rng.int(61) : (tokens[k - 1]! + 1) % 61;
      const targets = tokens.map((_t, k) => (k % 32 === 31 ? -100 : tokens[k + 1]!));
      out.push((await engine.step([{ tokens, targets, shape: [4, 32] }], o.lr)).loss);
    }
  } finally {
    engine.dispose();
  }
  return out;
}

async function start(p: "fp32" | "bf16") {
  try {
    return {
      ok: true as const,
      backend: await startBackend("cuda", () => {}, { cudaPrecision: p }),
    };
  } catch (e) {
    return { ok: false as const, error: (e as Error).message };
  }
}

const fp32 = await start("fp32");
describe.runIf(cudaSuiteRuns("cuda training", fp32))("training on cuda", () => {
  it("fp32 follows the CPU's loss curve; bf16 stays within 1 % of fp32 for 30 steps", async () => {
    if (!fp32.ok) return;
    const cpu = await losses(cpuBackendOps);
    const gpu = await losses(fp32.backend.ops);
    fp32.backend.stop();
    for (const [k, l] of cpu.entries())
      expect(Math.abs(gpu[k]! - l), `step ${k}: cuda ${gpu[k]} cpu ${l}`).toBeLessThan(
        2e-3 * (1 + l),
      );
    expect(cpu.at(-1)!).toBeLessThan(cpu[0]! * 0.8); // it learns
    const bf16 = await start("bf16");
    if (!bf16.ok) throw new Error(bf16.error);
    const half = await losses(bf16.backend.ops);
    bf16.backend.stop();
    console.log(`cuda losses: fp32 ${gpu.map((l) => l.toFixed(4)).join(" ")}`);
    console.log(`cuda losses: bf16 ${half.map((l) => l.toFixed(4)).join(" ")}`);
    for (const [k, l] of gpu.entries())
      expect(Math.abs(half[k]! - l) / l, `step ${k}`).toBeLessThan(0.01);
  }, 600_000);
});
