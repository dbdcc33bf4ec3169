/*
 * A protocol sweep: train every member of an iso-parameter or iso-FLOPs family on one task,
 * then write sweep.json, print the comparison table and render the HTML report.
 *
 * The sweep folder is locked while it runs. An existing sweep is only continued (`resume`:
 * finished members are kept — their numbers come from their own log — interrupted ones resume
 * from their checkpoints, each checked against the settings it was started with) or replaced
 * (`overwrite`).
 */
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { comparisonTable, type SweepFile, type SweepRow } from "@loop/eval";
import { renderSweepReport } from "@loop/eval/node";
import { type ModelConfig, planIsoFlops, planIsoParameter } from "@loop/looped";
import { inputFileExists, makeDirectory } from "@loop/tensor/node";
import { resolveTrainOptions, type TrainOptions } from "@loop/train";
import {
  checkResumeMatches,
  type EvalRecord,
  holdsRun,
  latestCheckpoint,
  lockRunFolder,
  readRunInfo,
  readRunLog,
  resumeTrainOptions,
  writeJsonFile,
} from "@loop/train/node";
import { asCliError, CliError } from "./errors.js";
import { type TrainJob, trainJob } from "./run-training.js";

export const PROTOCOLS = ["iso-param", "iso-flops"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** A sweep; its members train as TrainJobs with the fields taken from here. */
export interface SweepJob
  extends Pick<TrainJob, "task" | "taskInfo" | "train" | "evalCount" | "backend" | "signal"> {
  outDir: string;
  protocol: Protocol;
  base: ModelConfig;
  loops: number[];
  /** Continue the sweep in `outDir`: keep finished members, resume interrupted ones. */
  resume: boolean;
  /** Replace the sweep in `outDir`. */
  overwrite?: boolean;
  log?: (line: string) => void;
}

export interface SweepResult {
  sweep: SweepFile;
  table: string;
  reportPath: string;
  /** What the table's numbers rest on beyond the command's flags (members extended, and how). */
  notes: string[];
}

/** "2⊗4" → "2x4" for folder names. */
export function runFolderName(label: string): string {
  return label.replace("⊗", "x");
}

/** The loop counts of `--loops`, each once. */
export function checkDistinctLoops(loops: readonly number[]): void {
  const twice = loops.filter((r, i) => loops.indexOf(r) !== i);
  if (twice.length)
    throw new CliError(
      `--loops lists ${[...new Set(twice)].join(", ")} more than once: each member is trained once`,
    );
}

/** The last evaluation in a finished member's log. */
export function lastEvaluation(runDir: string): EvalRecord | null {
  const recs = readRunLog(join(runDir, "log.jsonl")).records as { eval?: EvalRecord }[];
  return recs.filter((r) => r.eval).at(-1)?.eval ?? null;
}

/**
 * Create and lock a sweep folder, refusing to reuse one that holds a sweep unless it is resumed
 * or replaced. Returns the release function (re-entrant: commands open it before their set-up,
 * runSweep again).
 */
export function openSweepFolder(
  outDir: string,
  mode: { resume: boolean; overwrite?: boolean },
): () => void {
  if (mode.resume && mode.overwrite)
    throw new CliError("--resume and --overwrite exclude each other: choose one");
  asCliError(() => makeDirectory(outDir));
  const release = lockRunFolder(outDir);
  try {
    const existing =
      existsSync(join(outDir, "sweep.json")) ||
      readdirSync(outDir, { withFileTypes: true }).some(
        (d) => d.isDirectory() && holdsRun(join(outDir, d.name)),
      );
    if (existing && !mode.resume && !mode.overwrite)
      throw new CliError(
        `${outDir} already holds a sweep: resume it (--resume) or replace it (--overwrite), or choose another folder`,
      );
    if (mode.overwrite)
      for (const f of ["sweep.json", "report.html"]) rmSync(join(outDir, f), { force: true });
    return release;
  } catch (e) {
    release();
    throw e;
  }
}

type Plan = ReturnType<typeof planIsoParameter>;

/** How a continued sweep (or a queue worker) starts a member, from what its run folder holds. */
export type MemberStart =
  | { kind: "finished"; ev: EvalRecord }
  | { kind: "resume"; train: TrainOptions }
  | { kind: "fresh" };

/**
 * A member's run folder, checked against the member's settings (the first difference is an
 * error): finished (its numbers come from its own log), resumable from a checkpoint (with the
 * recorded schedule; only RESUME_CHANGES may differ), or nothing worth keeping.
 */
export function memberStart(
  runDir: string,
  label: string,
  config: ModelConfig,
  train: TrainOptions,
): MemberStart {
  if (!holdsRun(runDir) || !asCliError(() => inputFileExists(join(runDir, "run.json"))))
    return { kind: "fresh" };
  const info = readRunInfo(runDir);
  const resumed = resumeTrainOptions(info.train, {
    steps: train.steps,
    evalEvery: train.evalEvery,
    checkpointEvery: train.checkpointEvery,
    checkpointing: train.checkpointing,
  }).train;
  try {
    checkResumeMatches(runDir, info, config, { ...train, scheduleSteps: resumed.scheduleSteps });
  } catch (e) {
    throw new CliError(`member ${label}: ${(e as Error).message}`);
  }
  if (
    resumed.steps === info.train.steps &&
    existsSync(join(runDir, "final", "model.safetensors"))
  ) {
    const ev = lastEvaluation(runDir);
    if (!ev) throw new CliError(`member ${label}: ${runDir}/log.jsonl holds no evaluation`);
    return { kind: "finished", ev };
  }
  return latestCheckpoint(runDir) ? { kind: "resume", train: resumed } : { kind: "fresh" };
}

/**
 * The training options every member of a continued sweep trains with, and what to tell the
 * reader. A larger `--steps` than the sweep was planned for extends it as `train --resume`
 * extends a run: the members already started keep their warmup-cosine schedule and run the
 * extra steps at its final learning rate, and members not started yet train on that same
 * schedule — so that every row of the table follows one schedule. Members started on different
 * schedules cannot be compared that way: an error naming --steps.
 */
export function sweepSchedule(
  outDir: string,
  plan: Plan,
  train: TrainOptions,
): { train: TrainOptions; notes: string[] } {
  const started: { label: string; recorded: TrainOptions }[] = [];
  const fresh: string[] = [];
  for (const p of plan) {
    const runDir = join(outDir, runFolderName(p.label));
    if (holdsRun(runDir) && asCliError(() => inputFileExists(join(runDir, "run.json"))))
      started.push({ label: p.label, recorded: readRunInfo(runDir).train });
    else fresh.push(p.label);
  }
  const scheduleOf = (t: TrainOptions) => t.scheduleSteps ?? t.steps;
  const schedules = [...new Set(started.map((m) => scheduleOf(m.recorded)))];
  if (schedules.length > 1)
    throw new CliError(
      `--steps: the members of the sweep in ${outDir} follow different learning-rate schedules (${started.map((m) => `${m.label}: ${scheduleOf(m.recorded)} steps`).join(", ")}), so their table would compare unlike runs; resume each with train --resume, or start the sweep afresh (--overwrite)`,
    );
  const schedule = schedules[0];
  if (schedule === undefined || train.steps <= schedule) return { train, notes: [] };
  const extended = started.filter((m) => m.recorded.steps < train.steps);
  const minLr = (started[0]?.recorded.minLr ?? train.minLr).toExponential(2);
  const notes = [
    `--steps ${train.steps} extends this sweep, planned for ${schedule} steps, as train --resume extends a run: every member's learning rate follows the ${schedule}-step warmup-cosine schedule and stays at its final value ${minLr} for steps ${schedule + 1}–${train.steps}`,
  ];
  if (extended.length > 0)
    notes.push(
      `extended: ${extended.map((m) => `${m.label} (from ${m.recorded.steps} steps)`).join(", ")}`,
    );
  if (fresh.length > 0)
    notes.push(`trained from the start on the same schedule: ${fresh.join(", ")}`);
  return { train: resolveTrainOptions({ ...train, scheduleSteps: schedule }), notes };
}

/** The members of a sweep, in table order (each loop count once, each run folder once). */
export function planSweep(job: Pick<SweepJob, "protocol" | "task" | "base" | "loops">): Plan {
  checkDistinctLoops(job.loops);
  const opts = { seqLen: job.task.seqLen };
  const plan =
    job.protocol === "iso-param"
      ? planIsoParameter(job.base, job.loops, opts)
      : planIsoFlops(job.base, job.loops, opts);
  const names = plan.map((p) => runFolderName(p.label));
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new CliError(`the sweep plans member ${dup} twice: choose other --loops`);
  return plan;
}

/** A member's row of sweep.json. */
export function sweepRow(p: Plan[number], ev: EvalRecord): SweepRow {
  return {
    label: p.label,
    role: p.role,
    run: runFolderName(p.label),
    params: p.params,
    flops_per_token: p.flopsPerToken,
    metric_value: ev.final,
    per_step: ev.per_step,
  };
}

/** sweep.json: written after every member, so a stopped sweep keeps what it finished. */
export function writeSweepFile(outDir: string, sweep: SweepFile): void {
  writeJsonFile(join(outDir, "sweep.json"), sweep);
}

/** The comparison table and the HTML report of a written sweep.json. */
export async function finishSweep(
  outDir: string,
  sweep: SweepFile,
  notes: string[] = [],
): Promise<SweepResult> {
  const reportPath = await renderSweepReport(outDir);
  return { sweep, table: comparisonTable(sweep.rows, sweep.metric, "text"), reportPath, notes };
}

export async function runSweep(job: SweepJob): Promise<SweepResult> {
  const plan = planSweep(job);
  const release = openSweepFolder(job.outDir, job);
  try {
    return await trainMembers(job, plan);
  } finally {
    release();
  }
}

async function trainMembers(job: SweepJob, plan: Plan): Promise<SweepResult> {
  const rows: SweepRow[] = [];
  let metric: SweepFile["metric"] = "accuracy";
  const schedule = job.resume
    ? sweepSchedule(job.outDir, plan, job.train)
    : { train: job.train, notes: [] };
  for (const n of schedule.notes) job.log?.(`looplm: ${n}`);
  const sweep = (): SweepFile => ({ protocol: job.protocol, task: job.task.name, metric, rows });
  for (const [i, p] of plan.entries()) {
    const run = runFolderName(p.label);
    const runDir = join(job.outDir, run);
    const tag = `[${i + 1}/${plan.length}] ${p.label}`;
    let ev: EvalRecord | null = null;
    let train = schedule.train;
    let resume = false;
    if (job.resume) {
      const start = memberStart(runDir, p.label, p.config, schedule.train);
      if (start.kind === "finished") {
        ev = start.ev;
        job.log?.(`${tag}: already trained, kept`);
      } else if (start.kind === "resume") {
        train = start.train;
        resume = true;
        job.log?.(
          start.train.steps > readRunInfo(runDir).train.steps
            ? `${tag}: extending from ${readRunInfo(runDir).train.steps} to ${start.train.steps} steps, from its last checkpoint`
            : `${tag}: resuming from its last checkpoint`,
        );
      }
    }
    if (!ev) {
      if (!resume)
        job.log?.(
          `${tag} (${p.role}): ${p.params.toLocaleString("en-US")} params, ${p.flopsPerToken.toLocaleString("en-US")} FLOPs/token`,
        );
      const res = await trainJob({
        runDir,
        task: job.task,
        taskInfo: job.taskInfo,
        config: p.config,
        train,
        evalCount: job.evalCount,
        backend: job.backend,
        resume,
        // A member without a checkpoint yet restarts from scratch (with --resume or --overwrite).
        overwrite: !resume && (job.resume || job.overwrite),
        signal: job.signal,
        label: p.label,
      });
      ev = res.lastEval;
    }
    if (!ev) throw new Error(`sweep: run ${p.label} produced no evaluation`);
    metric = ev.metric;
    rows.push(sweepRow(p, ev));
    writeSweepFile(job.outDir, sweep());
  }
  return finishSweep(job.outDir, sweep(), schedule.notes);
}
