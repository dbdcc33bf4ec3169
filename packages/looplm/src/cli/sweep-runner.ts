/**
 * A protocol sweep: train every member of an iso-parameter or iso-FLOPs family on one task,
 * then write sweep.json, print the comparison table and render the HTML report.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { comparisonTable, type SweepFile, type SweepRow } from "@loop/eval";
import { renderSweepReport } from "@loop/eval/node";
import { type ModelConfig, planIsoFlops, planIsoParameter } from "@loop/looped";
import type { Task } from "@loop/tasks";
import { readJsonFile } from "@loop/tensor/node";
import type { TrainOptions } from "@loop/train";
import { writeJsonFile } from "@loop/train/node";
import { trainJob } from "./run-training.js";

export const PROTOCOLS = ["iso-param", "iso-flops"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

export interface SweepJob {
  outDir: string;
  protocol: Protocol;
  task: Task;
  taskInfo: Record<string, unknown>;
  base: ModelConfig;
  loops: number[];
  train: TrainOptions;
  evalCount: number;
  /** Keep finished members (their final/ exists) instead of retraining them. */
  resume: boolean;
  log?: (line: string) => void;
}

export interface SweepResult {
  sweep: SweepFile;
  table: string;
  reportPath: string;
}

/** "2⊗4" → "2x4" for folder names. */
export function runFolderName(label: string): string {
  return label.replace("⊗", "x");
}

export async function runSweep(job: SweepJob): Promise<SweepResult> {
  const opts = { seqLen: job.task.seqLen };
  const plan =
    job.protocol === "iso-param"
      ? planIsoParameter(job.base, job.loops, opts)
      : planIsoFlops(job.base, job.loops, opts);
  const rows: SweepRow[] = [];
  let metric: SweepFile["metric"] = "accuracy";
  plan.forEach((p, i) => {
    const run = runFolderName(p.label);
    const runDir = join(job.outDir, run);
    let ev: { metric: SweepFile["metric"]; per_step: number[]; final: number } | null = null;
    if (job.resume && existsSync(join(runDir, "final", "model.safetensors"))) {
      job.log?.(`[${i + 1}/${plan.length}] ${p.label}: already trained, kept`);
      const lines = readJsonFile<{ rows?: SweepRow[] }>(join(job.outDir, "sweep.json")).rows ?? [];
      const prev = lines.find((r) => r.run === run);
      if (prev)
        ev = {
          metric: job.task.metric,
          per_step: prev.per_step,
          final: prev.metric_value,
        };
    }
    if (!ev) {
      job.log?.(
        `[${i + 1}/${plan.length}] ${p.label} (${p.role}): ${p.params.toLocaleString("en-US")} params, ${p.flopsPerToken.toLocaleString("en-US")} FLOPs/token`,
      );
      const res = trainJob({
        runDir,
        task: job.task,
        taskInfo: job.taskInfo,
        config: p.config,
        train: job.train,
        evalCount: job.evalCount,
        resume: false,
        label: p.label,
      });
      ev = res.lastEval;
    }
    if (!ev) throw new Error(`sweep: run ${p.label} produced no evaluation`);
    metric = ev.metric;
    rows.push({
      label: p.label,
      role: p.role,
      run,
      params: p.params,
      flops_per_token: p.flopsPerToken,
      metric_value: ev.final,
      per_step: ev.per_step,
    });
    writeJsonFile(join(job.outDir, "sweep.json"), {
      protocol: job.protocol,
      task: job.task.name,
      metric,
      rows,
    });
  });
  const sweep: SweepFile = { protocol: job.protocol, task: job.task.name, metric, rows };
  const reportPath = await renderSweepReport(job.outDir);
  return { sweep, table: comparisonTable(rows, metric, "text"), reportPath };
}
