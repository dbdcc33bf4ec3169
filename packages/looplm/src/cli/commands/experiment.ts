/*
 * `looplm experiment`: the default experiment (what `pnpm start` runs). A small iso-parameter
 * p-hop sweep — the same single Mamba-2 layer run once (1⊗1) and looped (1⊗R) — that shows the
 * paper's central claim at toy scale: looping the same parameters buys reasoning depth.
 */
import { parseConfig } from "@loop/looped";
import { pHop } from "@loop/tasks";
import { resolveTrainOptions } from "@loop/train";
import type { Command } from "commander";
import { commandBackend, needsKernels } from "../compute.js";
import { intFlag } from "../errors.js";
import { withInterrupts } from "../interrupt.js";
import { openSweepFolder, runSweep } from "../sweep-runner.js";

export const DEFAULT_EXPERIMENT = {
  task: { alphabet: 4, length: 32, hops: 3, dense: true },
  model: { dModel: 32, layers: 1, dState: 16, headdim: 16, chunk: 16 },
  loops: [1, 2, 4],
  train: { steps: 800, batchSize: 32, lr: 6e-3, warmupSteps: 30, evalEvery: 100 },
  evalCount: 512,
} as const;

interface Flags {
  out: string;
  steps: number;
  seed: number;
  resume: boolean;
  overwrite: boolean;
}

export async function runExperiment(f: Flags, cmd: Command): Promise<void> {
  const d = DEFAULT_EXPERIMENT;
  const t0 = performance.now();
  const task = pHop(d.task);
  const base = parseConfig({
    backbone: "mamba",
    vocab_size: task.vocabSize,
    d_model: d.model.dModel,
    n_layers: d.model.layers,
    ssm: { d_state: d.model.dState, headdim: d.model.headdim, chunk_size: d.model.chunk },
  });
  const train = resolveTrainOptions({
    ...d.train,
    steps: f.steps,
    warmupSteps: Math.min(d.train.warmupSteps, f.steps),
    minLr: d.train.lr / 10,
    checkpointEvery: 100,
    seed: f.seed,
  });
  process.stderr.write(
    `looplm default experiment: iso-parameter sweep ${d.loops.map((r) => `${d.model.layers}⊗${r}`).join(" vs ")} on ${task.name}\n` +
      `(p-hop: |Σ|=${d.task.alphabet}, n=${d.task.length}, p=${d.task.hops}; Mamba-2 d_model ${d.model.dModel}; ${f.steps} steps of ${d.train.batchSize})\n`,
  );
  const release = openSweepFolder(f.out, f);
  const res = await withInterrupts("the same looplm experiment command with --resume", (signal) =>
    runSweep({
      outDir: f.out,
      protocol: "iso-param",
      task,
      taskInfo: { name: "phop", ...d.task },
      base,
      loops: [...d.loops],
      train,
      evalCount: d.evalCount,
      backend: commandBackend(cmd),
      resume: f.resume,
      overwrite: f.overwrite,
      signal,
      log: (l) => process.stderr.write(`${l}\n`),
    }),
  ).finally(release);
  const rows = res.sweep.rows;
  const baseRow = rows.find((r) => r.role === "baseline")!;
  const best = rows.reduce((a, b) => (b.metric_value > a.metric_value ? b : a));
  const minutes = ((performance.now() - t0) / 60000).toFixed(1);
  const verdict =
    best.label !== baseRow.label
      ? `${best.label} beats its iso-parameter baseline ${baseRow.label}: ${(100 * best.metric_value).toFixed(1)}% vs ${(100 * baseRow.metric_value).toFixed(1)}% with the same ${baseRow.params.toLocaleString("en-US")} parameters.`
      : `the looped models did not beat the baseline ${baseRow.label} in this run.`;
  process.stdout.write(
    `\nIso-parameter p-hop sweep (${task.name}), accuracy on ${d.evalCount} held-out sequences:\n${res.table}\n${res.notes.map((n) => `${n}\n`).join("")}\n` +
      `Result: ${verdict}\nPer loop step accuracy of the looped model: ${best.per_step.map((v) => `${(100 * v).toFixed(1)}%`).join(" → ")}\n` +
      `Report: ${res.reportPath}\nTook ${minutes} min.\n`,
  );
}

export function registerExperiment(program: Command): void {
  needsKernels(program.command("experiment"))
    .description(
      "Run the default experiment: an iso-parameter p-hop sweep, looped Mamba-2 vs its non-looped baseline",
    )
    .option("--out <dir>", "sweep folder", "runs/default-experiment")
    .addOption(
      intFlag("--steps <n>", "training steps per model", 1, DEFAULT_EXPERIMENT.train.steps),
    )
    .addOption(intFlag("--seed <n>", "seed of weights and data", 0, 1))
    .option(
      "--resume",
      "continue the experiment in --out: keep finished models, resume interrupted ones",
      false,
    )
    .option("--overwrite", "replace the experiment already in --out", false)
    .addHelpText(
      "after",
      "\nExample:\n  looplm experiment                 # what `pnpm start` runs\n  looplm experiment --steps 100 --out /tmp/quick",
    )
    .action(runExperiment);
}
