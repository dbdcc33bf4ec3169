/*
 * A queued member's result as its run folder holds it. The queue only says that a job is done;
 * whoever can write to Redis can say so of any job, with any return value. So the coordinator
 * reads the numbers from the folder it recorded the job in: the job record (`queue-job.json`,
 * written by the coordinator itself) must still be this job's, `run.json` must hold the job's
 * settings, `final/` must hold the finished weights of the job's model (its config.json), and
 * `log.jsonl` must end with the evaluation of the job's last step — in the task's metric, one
 * finite value in range per loop step of the model, the final value the last one.
 */
import { join } from "node:path";
import { configToJson } from "@loop/looped";
import { readJsonFile } from "@loop/tensor/node";
import { canonicalJson, type EvalRecord, readRunLog } from "@loop/train/node";
import { metricRangeProblem, shown } from "../cli/metric-range.js";
import { TASK_METRIC } from "../cli/options/task.js";
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

/**
 * The problem of an evaluation record read from a log of job `d`, or null: the metric of the
 * job's task, one value per loop step of its model, the final value the last one.
 */
function evalProblem(ev: unknown, d: TrainingJobData): string | null {
  const e = ev as Partial<EvalRecord> | null;
  if (typeof e !== "object" || e === null) return "its evaluation is not an object";
  const metric = TASK_METRIC[d.task.task];
  if (e.metric !== metric)
    return `its metric ${shown(e.metric)} is not ${metric} (the metric of task ${d.task.task})`;
  const f = metricRangeProblem(metric, e.final);
  if (f) return `its final ${f}`;
  if (!Array.isArray(e.per_step) || e.per_step.length !== d.config.n_loops)
    return `its per_step is not one value per loop step of the model (${d.config.n_loops})`;
  for (const [i, v] of e.per_step.entries()) {
    const p = metricRangeProblem(metric, v);
    if (p) return `its per_step[${i}] ${p}`;
  }
  if (e.final !== e.per_step.at(-1))
    return `its final ${e.final} is not its last loop step's value ${e.per_step.at(-1)}`;
  return null;
}

/** Null when `dir` (a final/ folder) holds a model of `d`'s config, else why not. */
function finalModelProblem(dir: string, d: TrainingJobData): string | null {
  const path = join(dir, "config.json");
  let held: unknown;
  try {
    held = readJsonFile(path);
  } catch (e) {
    return `${path} cannot be read (${(e as Error).message})`;
  }
  return canonicalJson(held) === canonicalJson(JSON.parse(configToJson(d.config)))
    ? null
    : `${path} is another model's than the job's (a final/ of another run)`;
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
  const model = finalModelProblem(join(d.runDir, "final"), d);
  if (model) return { ok: false, why: model };
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
  const bad = evalProblem(last.eval, d);
  if (bad) return { ok: false, why: `${log} step ${d.train.steps}: ${bad}` };
  return { ok: true, steps: d.train.steps, eval: last.eval as EvalRecord };
}
