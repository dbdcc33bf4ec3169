/**
 * Training-step memory of a looped model: activations of all R·N layer applications stored for
 * the backward pass (default) vs recomputed per loop step (activation checkpointing). Each
 * measurement runs in a fresh process (lib/memory-probe.ts): "held for backward" is the live
 * array-buffer memory between forward and backward after a forced garbage collection, i.e.
 * everything the recorded graph keeps alive; "peak RSS" is the process's high-water mark.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { BenchContext } from "./lib/context.js";
import type { GpuBench } from "./lib/gpu.js";
import { gpuStepPeak, STEP_MODES } from "./lib/gpu-step-memory.js";
import type { MemoryConfig } from "./lib/memory-config.js";

export const name = "memory";
export const description =
  "training-step memory: stored activations vs per-loop-step recomputation";

const CONFIGS: (MemoryConfig & { label: string })[] = [
  { label: "mamba D64 1⊗12, 32×256", d: 64, N: 1, R: 12, ds: 16, hd: 16, V: 32, B: 32, T: 256 },
  { label: "mamba D128 4⊗6, 32×128", d: 128, N: 4, R: 6, ds: 32, hd: 32, V: 32, B: 32, T: 128 },
  { label: "mamba D256 2⊗4, 16×256", d: 256, N: 2, R: 4, ds: 64, hd: 64, V: 256, B: 16, T: 256 },
];

const probe = fileURLToPath(new URL("./lib/memory-probe.ts", import.meta.url));
const mib = (b: number) => Number((b / 2 ** 20).toFixed(1));

function measure(
  config: object,
  mode: string,
): { held: number; forwardS: number; backwardS: number; peakRss: number } {
  const r = spawnSync(
    process.execPath,
    [
      "--expose-gc",
      "--import",
      "tsx",
      "--conditions=@loop/source",
      probe,
      JSON.stringify(config),
      mode,
    ],
    {
      encoding: "utf8",
    },
  );
  if (r.status !== 0) throw new Error(`memory probe failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!);
}

export async function run(ctx: BenchContext): Promise<void> {
  const rows = [];
  for (const c of ctx.quick ? CONFIGS.slice(0, 1) : CONFIGS) {
    const row: Record<string, string | number> = { config: c.label };
    for (const mode of ["stored", "recompute"]) {
      const m = measure(c, mode);
      row[`${mode}: held MiB`] = mib(m.held);
      row[`${mode}: peak RSS MiB`] = mib(m.peakRss);
      row[`${mode}: fwd+bwd s`] = Number((m.forwardS + m.backwardS).toFixed(2));
    }
    rows.push(row);
  }
  ctx.table(rows, "Training-step memory (held = live between forward and backward)");
  ctx.log("Parameters, gradients and AdamW moments come on top: 4 × 4 bytes per parameter.");
}

/**
 * `--backend webgpu`: the peak device memory of a training step (`GpuContext.memory()`) with the
 * activations kept to the end of the micro-batch, freed as the backward consumes them (the
 * default) and with activation checkpointing; on a CPU emulation one small configuration.
 */
export async function runWebgpu(ctx: BenchContext, gpu: GpuBench): Promise<void> {
  const configs = gpu.emulated
    ? [{ ...CONFIGS[0]!, label: "mamba D64 1⊗4, 8×32", R: 4, B: 8, T: 32 }]
    : ctx.quick
      ? CONFIGS.slice(0, 1)
      : CONFIGS;
  const rows = [];
  for (const c of configs) {
    const row: Record<string, string | number> = { config: c.label };
    const losses = new Set<number>();
    for (const m of STEP_MODES) {
      const r = await gpuStepPeak(gpu.ctx, c, m);
      row[`${m.mode}: peak MiB`] = mib(r.peakBytes);
      losses.add(r.loss);
    }
    row["same loss"] = losses.size === 1 ? "yes" : "no";
    rows.push(row);
  }
  ctx.table(
    rows,
    `Training-step device memory on ${gpu.adapter} (peak bytes held at once in the second step: ` +
      "weights, gradients, AdamW moments and live activations, in the pool's size classes; " +
      "kept = activations to the end of the micro-batch, freed = released as the backward " +
      "consumes them, checkpointed = freed + each loop step recomputed in the backward)",
  );
}
