/**
 * One setting of the memory benchmark (memory.bench.ts): a looped Mamba-2 model and a batch,
 * shared by the CPU probe (memory-probe.ts, in its own process) and the webgpu step
 * (gpu-step-memory.ts).
 */
import { type ModelConfig, parseConfig } from "@loop/looped";

export interface MemoryConfig {
  d: number;
  N: number;
  R: number;
  ds: number;
  hd: number;
  V: number;
  B: number;
  T: number;
}

export function memoryModelConfig(c: MemoryConfig): ModelConfig {
  return parseConfig({
    backbone: "mamba",
    vocab_size: c.V,
    d_model: c.d,
    n_layers: c.N,
    n_loops: c.R,
    ssm: { d_state: c.ds, headdim: c.hd, chunk_size: 64 },
  });
}
