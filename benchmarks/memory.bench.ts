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

export const name = "memory";
export const description =
  "training-step memory: stored activations vs per-loop-step recomputation";

const CONFIGS = [
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
