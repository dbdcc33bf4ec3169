/*
 * The schema of a seed record (seed-record.ts), checked field by field before any number of it is
 * used: every arm of the study with its sweep (the arm's protocol and its task's metric, one row
 * per member in the arm's order, finite sizes), each metric in its range (accuracy in [0, 1],
 * perplexity ≥ 1) and finite, one value per loop step of the member wherever a record holds
 * values per loop step (a member's final value its last one), and exactly the downstream, cloze
 * and per-length scores the arm has (per-length ones at every length of the arm's task). A record
 * that someone edited by hand, or that a full disk cut short, is refused naming the field,
 * instead of yielding "228.38 ± 291.59 %" or an internal message. (A plausible edit — 0.47 made
 * 0.52 at every place it appears — cannot be told from a real result: a record is not signed.)
 */
import { metricRangeProblem, shown } from "../metric-range.js";
import { TASK_DEFAULTS, TASK_METRIC } from "../options/task.js";
import { printable } from "../printable.js";
import { CLOZE_NAME } from "./downstream.js";
import type { ArmDef, StudyDef } from "./study-types.js";

/** A field of a record that is not as the schema says: where (`arms["a"].sweep.rows[0]…`), what. */
export class FieldProblem extends Error {
  override name = "FieldProblem";
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field} ${problem}`);
  }
}

const key = (at: string, k: string) => `${at}[${JSON.stringify(k)}]`;

function obj(v: unknown, at: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new FieldProblem(at, `must be an object, got ${shown(v)}`);
  return v as Record<string, unknown>;
}

/** A string, printed as it is (tables, results.md): no control characters. */
function str(v: unknown, at: string): string {
  if (typeof v !== "string") throw new FieldProblem(at, `must be a string, got ${shown(v)}`);
  if (printable(v) !== v)
    throw new FieldProblem(at, `must be text without control characters, got "${printable(v)}"`);
  return v;
}

function list(v: unknown, at: string): unknown[] {
  if (!Array.isArray(v) || v.length === 0)
    throw new FieldProblem(at, `must be a non-empty array, got ${shown(v)}`);
  return v;
}

function size(v: unknown, at: string): number {
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0)
    throw new FieldProblem(at, `must be a finite number ≥ 0, got ${shown(v)}`);
  return v;
}

type Metric = "accuracy" | "ppl";

function metricValue(metric: Metric, v: unknown, at: string): number {
  const problem = metricRangeProblem(metric, v);
  if (problem) throw new FieldProblem(at, problem);
  return v as number;
}

/** Values of `metric` at each of a member's `steps` loop steps; returns the last. */
function perStep(metric: Metric, v: unknown, at: string, steps: number): number {
  const values = list(v, at);
  if (values.length !== steps)
    throw new FieldProblem(
      at,
      `must hold one value per loop step of the member (${steps}), got ${values.length}`,
    );
  return values.map((x, i) => metricValue(metric, x, `${at}[${i}]`)).at(-1)!;
}

/** The loop steps of member `label` ("N⊗R": R). */
const loopsOf = (label: string): number => Number(label.slice(label.indexOf("⊗") + 1));

/** The labels of an arm's members in its sweep's order (planIsoParameter / planIsoFlops). */
export function armLabels(arm: Pick<ArmDef, "protocol" | "base" | "loops">): string[] {
  const b = arm.base;
  if (arm.protocol === "iso-param") return arm.loops.map((r) => `${b}⊗${r}`);
  return arm.loops.flatMap((r) => (r > 1 ? [`${b}⊗${r}`, `${b * r}⊗1`] : [`${b}⊗1`]));
}

/** The set `name`'s accuracies at every loop step per member label (downstream, cloze). */
function scores(v: unknown, at: string, labels: readonly string[], name: string): void {
  const o = obj(v, at);
  if (o.name !== name)
    throw new FieldProblem(`${at}.name`, `must be ${JSON.stringify(name)}, got ${shown(o.name)}`);
  const acc = obj(o.acc, `${at}.acc`);
  for (const l of labels) perStep("accuracy", acc[l], key(`${at}.acc`, l), loopsOf(l));
}

function sweep(arm: ArmDef, v: unknown, at: string): void {
  const o = obj(v, at);
  if (o.protocol !== arm.protocol)
    throw new FieldProblem(`${at}.protocol`, `must be "${arm.protocol}", got ${shown(o.protocol)}`);
  str(o.task, `${at}.task`);
  // (the task fixes the metric: a perplexity in an accuracy arm's record is an edit)
  const metric: Metric = TASK_METRIC[arm.task.task];
  if (o.metric !== metric)
    throw new FieldProblem(
      `${at}.metric`,
      `must be "${metric}" (the metric of task ${arm.task.task}), got ${shown(o.metric)}`,
    );
  const labels = armLabels(arm);
  const rows = list(o.rows, `${at}.rows`);
  if (rows.length !== labels.length)
    throw new FieldProblem(
      `${at}.rows`,
      `must hold the arm's ${labels.length} members (${labels.join(", ")}), got ${rows.length}`,
    );
  rows.forEach((r, i) => {
    const w = `${at}.rows[${i}]`;
    const x = obj(r, w);
    if (x.label !== labels[i])
      throw new FieldProblem(`${w}.label`, `must be "${labels[i]}", got ${shown(x.label)}`);
    if (x.role !== "looped" && x.role !== "baseline")
      throw new FieldProblem(`${w}.role`, `must be "looped" or "baseline", got ${shown(x.role)}`);
    str(x.run, `${w}.run`);
    size(x.params, `${w}.params`);
    size(x.flops_per_token, `${w}.flops_per_token`);
    const value = metricValue(metric, x.metric_value, `${w}.metric_value`);
    const last = perStep(metric, x.per_step, `${w}.per_step`, loopsOf(labels[i]!));
    if (value !== last)
      throw new FieldProblem(
        `${w}.metric_value`,
        `must be the member's value at its last loop step (per_step: ${last}), got ${value}`,
      );
  });
}

function armRecord(arm: ArmDef, v: unknown, at: string): void {
  const o = obj(v, at);
  sweep(arm, o.sweep, `${at}.sweep`);
  const labels = armLabels(arm);
  // exactly the scores the arm has: one seed with scores its others lack cannot be aggregated
  const optional = (field: string, has: boolean, check: (x: unknown, w: string) => void) => {
    const w = `${at}.${field}`;
    if (!has && o[field] !== undefined)
      throw new FieldProblem(w, "must be absent: the arm has no such evaluation");
    if (has) {
      if (o[field] === undefined) throw new FieldProblem(w, "is missing");
      check(o[field], w);
    }
  };
  optional("downstream", arm.mc !== undefined, (x, w) => scores(x, w, labels, arm.mc!.name));
  optional("cloze", arm.cloze !== undefined, (x, w) => scores(x, w, labels, CLOZE_NAME));
  optional("perLength", arm.perLength !== undefined, (x, w) => {
    const per = obj(x, w);
    const lengths = arm.task.maxOps ?? TASK_DEFAULTS.maxOps;
    for (const l of labels) {
      const byLength = list(per[l], key(w, l));
      if (byLength.length !== lengths)
        throw new FieldProblem(
          key(w, l),
          `must hold one entry per expression length 1..${lengths}, got ${byLength.length}`,
        );
      byLength.forEach((steps, i) => {
        perStep("accuracy", steps, `${key(w, l)}[${i}]`, loopsOf(l));
      });
    }
  });
}

function machine(v: unknown, at: string): void {
  const o = obj(v, at);
  str(o.recorded, `${at}.recorded`);
  if (o.trained !== "here" && o.trained !== "queue")
    throw new FieldProblem(`${at}.trained`, `must be "here" or "queue", got ${shown(o.trained)}`);
  str(o.backend, `${at}.backend`);
  for (const k of ["cpu", "vector_isa", "node"]) if (o[k] !== undefined) str(o[k], `${at}.${k}`);
}

/**
 * The header of a record (study, seed, settings), checked before its seed and settings are
 * compared with the run's; throws FieldProblem.
 */
export function checkSeedRecordHeader(v: unknown): {
  study: string;
  seed: number;
  settings: string;
} {
  const o = obj(v, "the record");
  const study = str(o.study, "study");
  if (typeof o.seed !== "number" || !Number.isInteger(o.seed) || o.seed < 1)
    throw new FieldProblem("seed", `must be an integer ≥ 1, got ${shown(o.seed)}`);
  const settings = str(o.settings, "settings");
  return { study, seed: o.seed, settings };
}

/** The arms (every arm of `def`) and machine of a record of `def`'s settings; throws FieldProblem. */
export function checkSeedRecordBody(def: StudyDef, v: Record<string, unknown>): void {
  const arms = obj(v.arms, "arms");
  for (const arm of def.arms) {
    const at = key("arms", arm.id);
    if (arms[arm.id] === undefined) throw new FieldProblem(at, "is missing (an arm of the study)");
    armRecord(arm, arms[arm.id], at);
  }
  if (v.machine !== undefined) machine(v.machine, "machine");
}
