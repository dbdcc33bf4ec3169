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

/** One member of a sweep: what to train and where. */
export interface SweepMember {
  label: string;
  role: SweepRow["role"];
  /** Run folder name inside the sweep folder. */
  run: string;
  runDir: string;
  params: number;
  flopsPerToken: number;
  config: ModelConfig;
}

/** The members of a sweep, in table order. */
export function planSweep(
  job: Pick<SweepJob, "outDir" | "protocol" | "task" | "base" | "loops">,
): SweepMember[] {
  const opts = { seqLen: job.task.seqLen };
  const plan =
    job.protocol === "iso-param"
      ? planIsoParameter(job.base, job.loops, opts)
      : planIsoFlops(job.base, job.loops, opts);
  return plan.map((p) => ({
    label: p.label,
    role: p.role,
    run: runFolderName(p.label),
    runDir: join(job.outDir, runFolderName(p.label)),
    params: p.params,
    flopsPerToken: p.flopsPerToken,
    config: p.config,
  }));
}

type MemberEval = { metric: SweepFile["metric"]; per_step: number[]; final: number };

export function sweepRow(m: SweepMember, ev: MemberEval): SweepRow {
  return {
    label: m.label,
    role: m.role,
    run: m.run,
    params: m.params,
    flops_per_token: m.flopsPerToken,
    metric_value: ev.final,
    per_step: ev.per_step,
  };
}

/** sweep.json: written after every member, so a stopped sweep keeps what it finished. */
export function writeSweepFile(outDir: string, sweep: SweepFile): void {
  writeJsonFile(join(outDir, "sweep.json"), sweep);
}

/** The comparison table and the HTML report of a finished sweep.json. */
export async function finishSweep(outDir: string, sweep: SweepFile): Promise<SweepResult> {
  const reportPath = await renderSweepReport(outDir);
  return { sweep, table: comparisonTable(sweep.rows, sweep.metric, "text"), reportPath };
}

export async function runSweep(job: SweepJob): Promise<SweepResult> {
  const plan = planSweep(job);
  const rows: SweepRow[] = [];
  let metric: SweepFile["metric"] = "accuracy";
  plan.forEach((p, i) => {
    const { run, runDir } = p;
    let ev: MemberEval | null = null;
    if (job.resume && existsSync(join(runDir, "final", "model.safetensors"))) {
      job.log?.(`[${i + 1}/${plan.length}] ${p.label}: already trained, kept`);
      const lines = readJsonFile<{ rows?: SweepRow[] }>(join(job.outDir, "sweep.json")).rows ?? [];
      const prev = lines.find((r) => r.run === run);
      if (prev)
        ev = {
          metric: job.task.name.startsWith("lm") ? "ppl" : "accuracy",
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
    rows.push(sweepRow(p, ev));
    writeSweepFile(job.outDir, { protocol: job.protocol, task: job.task.name, metric, rows });
  });
  return finishSweep(job.outDir, { protocol: job.protocol, task: job.task.name, metric, rows });
}
