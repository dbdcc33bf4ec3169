/*
 * A queued member's result as its run folder holds it. The queue only says that a job is done;
 * whoever can write to Redis can say so of any job, with any return value. So the coordinator
 * reads the numbers from the folder it recorded the job in: the job record (`queue-job.json`,
 * written by the coordinator itself) must still be this job's, `run.json` must hold the job's
 * settings, `final/` must hold the finished weights, and `log.jsonl` must end with the
 * evaluation of the job's last step — with finite numbers in range.
 */
import { join } from "node:path";
import { type EvalRecord, readRunLog } from "@loop/train/node";
import { memberStart } from "../cli/sweep-runner.js";
import { jobRecordProblem, type TrainingJobData } from "./training-job.js";

/** What the coordinator trusts of a job the queue reports complete. */
export type FolderResult =
  | { ok: true; steps: number; eval: EvalRecord }
  | {
      ok: false;
      /** Why the folder holds no finished run of this job (one line, unescaped). */
      why: string;
    };

/** Null when `v` is a metric value of `metric` (accuracy in [0, 1], perplexity ≥ 1), else why not. */
function metricProblem(metric: unknown, v: unknown): string | null {
  if (typeof v !== "number" || !Number.isFinite(v)) return `${JSON.stringify(v)} is not a number`;
  if (metric === "accuracy" && (v < 0 || v > 1)) return `accuracy ${v} is outside [0, 1]`;
  if (metric === "ppl" && v < 1) return `perplexity ${v} is below 1`;
  return null;
}

/** The problem of an evaluation record read from a log, or null. */
function evalProblem(ev: unknown): string | null {
  const e = ev as Partial<EvalRecord> | null;
  if (typeof e !== "object" || e === null) return "its evaluation is not an object";
  if (e.metric !== "accuracy" && e.metric !== "ppl")
    return `its metric ${JSON.stringify(e.metric)} is neither accuracy nor ppl`;
  const f = metricProblem(e.metric, e.final);
  if (f) return `its final ${f}`;
  if (!Array.isArray(e.per_step) || e.per_step.length === 0)
    return "its per_step is not a non-empty array";
  for (const [i, v] of e.per_step.entries()) {
    const p = metricProblem(e.metric, v);
    if (p) return `its per_step[${i}] ${p}`;
  }
  return null;
}

/**
 * The result of job `id` (`d`: the coordinator's own job) from its run folder, or why the folder
 * holds no finished run of it. Reads only.
 */
export function folderResult(d: TrainingJobData, id: string): FolderResult {
  const record = jobRecordProblem(d, id);
  if (record) return { ok: false, why: record.message };
  let start: ReturnType<typeof memberStart>;
  try {
    start = memberStart(d.runDir, d.label, d.config, d.train);
  } catch (e) {
    return { ok: false, why: (e as Error).message };
  }
  if (start.kind !== "finished")
    return {
      ok: false,
      why: `${d.runDir} holds no finished run (${start.kind === "resume" ? "a checkpoint but no final/" : "no final/"})`,
    };
  const log = join(d.runDir, "log.jsonl");
  let last: { step: number; eval?: unknown } | undefined;
  try {
    last = readRunLog(log).records.at(-1) as typeof last;
  } catch (e) {
    return { ok: false, why: (e as Error).message };
  }
  if (last?.step !== d.train.steps || last.eval === undefined)
    return {
      ok: false,
      why: `${log} does not end with the evaluation of step ${d.train.steps}`,
    };
  const bad = evalProblem(last.eval);
  if (bad) return { ok: false, why: `${log} step ${d.train.steps}: ${bad}` };
  return { ok: true, steps: d.train.steps, eval: last.eval as EvalRecord };
}
