/*
 * `looplm eval --per-length`: a Mano model's accuracy at every expression length ℓ = 1..L and
 * loop step, on `--count` fresh expressions per ℓ (`evaluateManoByLength` of `@loop/eval`, the
 * "mano/eval-len" stream; `--seed` draws another). Prints one row per ℓ and writes the numbers as
 * JSON (eval-per-length.json beside the run, or --out).
 */
import { evaluateManoByLength, formatTable, MANO_LENGTH_STREAM } from "@loop/eval";
import type { LoopedModel } from "@loop/looped";
import type { ManoTask } from "@loop/tasks";
import type { CpuKernels } from "@loop/tensor/kernel";
import { writeJsonFile } from "@loop/train/node";
import { type ComputeBackend, hostBackendsFlag } from "../../backend.js";
import { CliError } from "../errors.js";

/** The stream indexes ℓ's expressions below 10⁶ (@loop/eval mano-length.ts). */
const MAX_COUNT = 1_000_000;

export const PER_LENGTH_FORMAT = "looplm-eval-per-length/1";

/** What eval-per-length.json holds. */
export interface PerLengthFile {
  format: typeof PER_LENGTH_FORMAT;
  model: { dir: string; label: string };
  task: Record<string, unknown>;
  stream: string;
  seed: number;
  /** Expressions per ℓ. */
  count: number;
  /** ℓ ("1".."L") → accuracy at every loop step r = 1..R. */
  per_length: Record<string, number[]>;
}

/** The flags that `--per-length` leaves out, and the task it needs (one line each). */
export function checkPerLengthFlags(
  f: { count: number; q?: number; qSweep?: unknown; mc?: string; piqa?: string },
  task: string,
  backend: Pick<ComputeBackend, "name" | "caps">,
): void {
  if (task !== "mano")
    throw new CliError(
      `--per-length scores Mano expressions by length; the task here is ${task}, not mano`,
    );
  if (f.count > MAX_COUNT)
    throw new CliError(`--count must be ≤ ${MAX_COUNT} with --per-length, got ${f.count}`);
  const other = (
    [
      ["--q", f.q],
      ["--q-sweep", f.qSweep],
      ["--mc", f.mc],
      ["--piqa", f.piqa],
    ] as const
  ).find(([, v]) => v !== undefined);
  if (other) throw new CliError(`--per-length cannot be used with ${other[0]}`);
  if (backend.caps.memory !== "host")
    throw new CliError(
      `--per-length is scored in host memory only (--backend ${backend.name} keeps the model on its device); use ${hostBackendsFlag()}`,
    );
}

export async function evalPerLength(o: {
  model: LoopedModel;
  checkpoint: string;
  task: ManoTask;
  taskInfo: Record<string, unknown>;
  count: number;
  seed?: number;
  batchSize: number;
  /** The CPU kernels of the backend scoring. */
  kernels: CpuKernels;
  out: string | null;
}): Promise<PerLengthFile> {
  const cfg = o.model.config;
  const r = await evaluateManoByLength(o.model, o.task, {
    count: o.count,
    seed: o.seed,
    batchSize: o.batchSize,
    kernels: o.kernels,
  });
  const label = `${cfg.n_layers}⊗${cfg.n_loops}`;
  const file: PerLengthFile = {
    format: PER_LENGTH_FORMAT,
    model: { dir: o.checkpoint, label },
    task: o.taskInfo,
    stream: MANO_LENGTH_STREAM,
    seed: r.seed,
    count: r.count,
    per_length: Object.fromEntries(
      r.lengths.map((l) => [String(l.ops), l.steps.map((s) => s.accuracy)]),
    ),
  };
  const head = ["ℓ", ...Array.from({ length: cfg.n_loops }, (_, i) => `step ${i + 1}`)];
  const body = r.lengths.map((l) => [
    String(l.ops),
    ...l.steps.map((s) => `${(100 * s.accuracy).toFixed(1)} %`),
  ]);
  process.stdout.write(
    `${label} on ${o.task.name}: accuracy per expression length ℓ and loop step, ${r.count} fresh expressions per ℓ (${MANO_LENGTH_STREAM}, seed ${r.seed})\n` +
      `${formatTable(head, body, () => true, "text")}\n`,
  );
  if (o.out) {
    writeJsonFile(o.out, file);
    process.stdout.write(`wrote ${o.out}\n`);
  }
  return file;
}
