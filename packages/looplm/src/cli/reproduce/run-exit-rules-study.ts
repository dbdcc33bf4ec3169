/*
 * Run the exit-rules study: the source gate study first (`gate-mixed` in its own folder beside
 * this one: what it already finished is kept, what is missing is trained), then per seed every
 * rule point on its gate2 model — the evaluation as a whole and for each p, and the decode time
 * per token of every realisable point — into <out>/seed-<k>.json, a record that stands for the
 * seed on --resume.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import type { AccuracyResult, PerplexityResult } from "@loop/eval";
import { type ExitRule, formatExitRule, isRealisable } from "@loop/exit-gate";
import { decodeStepEarlyExit, initDecodeState, type LoopedModel } from "@loop/looped";
import { loadCheckpoint } from "@loop/looped/node";
import { type Batch, PHopTask } from "@loop/tasks";
import { withKernels } from "@loop/tensor/kernel";
import { canonicalJson, writeJsonFile } from "@loop/train/node";
import { evaluateOnBackend } from "../../device-eval.js";
import { CliError } from "../errors.js";
import { TaskCache, taskFlags } from "./arm-inputs.js";
import type { RulePoint, RuleTiming, SeedRulesResult } from "./exit-rule-claims.js";
import type { ExitRulesStudyDef } from "./exit-rules-study.js";
import { GATE_EVAL_BATCH } from "./gate-study-types.js";
import { runGateStudy } from "./run-gate-study.js";
import type { StudyRunOptions } from "./run-sweep-study.js";
import { commitAtStart, type SeedMachine, seedMachine } from "./seed-machine.js";
import { keepRecordedSeed, readStudyRecord, seedRecordPath } from "./seed-record.js";

export interface ExitRulesResult {
  perSeed: SeedRulesResult[];
  machines: SeedMachine[];
  /** The source gate study's folder. */
  sourceDir: string;
}

/** One seed of the exit-rules study in <out>/seed-<k>.json. */
export interface ExitRulesRecord {
  study: ExitRulesStudyDef["name"];
  seed: number;
  settings: string;
  result: SeedRulesResult;
  machine: SeedMachine;
}

function settingsHash(def: ExitRulesStudyDef): string {
  const { title: _t, notes: _n, source, ...rest } = def;
  const { title: _st, notes: _sn, paper: _sp, ...src } = source;
  return createHash("sha256")
    .update(canonicalJson({ ...rest, source: src }))
    .digest("hex");
}

function threshold(rule: ExitRule): number | null {
  switch (rule.kind) {
    case "fixed":
      return rule.step;
    case "gate":
      return rule.q;
    case "confidence":
    case "entropy":
      return rule.tau;
    case "state-change":
      return rule.eps;
    case "agree":
      return rule.k;
    case "oracle":
      return null;
  }
}

function points(rules: readonly ExitRule[], r: AccuracyResult | PerplexityResult): RulePoint[] {
  return r.exits.map((e, i) => ({
    rule: e.rule,
    kind: rules[i]!.kind,
    threshold: threshold(rules[i]!),
    mean_step: e.meanStep,
    value: "accuracy" in e ? e.accuracy : e.ppl,
    histogram: e.histogram,
  }));
}

function perStep(r: AccuracyResult | PerplexityResult): number[] {
  return r.metric === "accuracy" ? r.steps.map((s) => s.accuracy) : r.steps.map((s) => s.ppl);
}

/** Timing rounds: every rule decodes the timing rows once per round, rules interleaved. */
const ROUNDS = 5;

/**
 * Decode every row of `rows` one token at a time under each realisable rule (batch 1, a fresh
 * state per row), in ROUNDS rounds that take the rules in turn (so a burst of load on a shared
 * machine hits every rule alike): the median over rounds of the wall-clock per token, and the
 * mean exit step. One untimed pass first warms up.
 */
export function timeRules(
  model: LoopedModel,
  rules: readonly ExitRule[],
  rows: readonly Batch[],
): RuleTiming[] {
  const seqs = rows.flatMap((b) => {
    const [B, T] = b.shape;
    return Array.from({ length: B }, (_v, i) => Array.from(b.tokens.subarray(i * T, (i + 1) * T)));
  });
  const decode = (rule: ExitRule) => {
    let steps = 0;
    let tokens = 0;
    for (const s of seqs) {
      const st = initDecodeState(model, 1, s.length);
      for (const t of s) {
        steps += decodeStepEarlyExit(model, st, [t], { rule }).exitSteps[0]!;
        tokens++;
      }
    }
    return { steps, tokens };
  };
  const timed = rules.filter(isRealisable);
  if (timed.length > 0) decode(timed[0]!);
  const ms: number[][] = timed.map(() => []);
  const counts = timed.map(() => ({ steps: 0, tokens: 0 }));
  for (let round = 0; round < ROUNDS; round++)
    timed.forEach((rule, i) => {
      const t0 = performance.now();
      const c = decode(rule);
      ms[i]!.push((performance.now() - t0) / c.tokens);
      counts[i] = c;
    });
  return timed.map((rule, i) => {
    const sorted = [...ms[i]!].sort((a, b) => a - b);
    const c = counts[i]!;
    return {
      rule: formatExitRule(rule),
      ms_per_token: sorted[Math.floor(sorted.length / 2)]!,
      mean_step: c.steps / c.tokens,
      tokens: c.tokens,
    };
  });
}

/** The seed's record in `outDir`, or null; a record of other settings is an error naming it. */
export function readExitRulesRecord(
  def: ExitRulesStudyDef,
  outDir: string,
  seed: number,
): ExitRulesRecord | null {
  return readStudyRecord(def.name, settingsHash(def), outDir, seed, "evaluate the seed again");
}

export async function runExitRulesStudy(
  def: ExitRulesStudyDef,
  o: StudyRunOptions,
): Promise<ExitRulesResult> {
  commitAtStart();
  const sourceDir = join(dirname(o.outDir), def.source.name);
  // the source study's finished seeds are kept (their records or folders), the rest trained
  o.log?.(`${def.name}: the models are ${def.source.name}'s, in ${sourceDir}`);
  await runGateStudy(def.source, { ...o, outDir: sourceDir, resume: true, overwrite: false });
  const task = await new TaskCache().get(taskFlags(def.source.task));
  const settings = settingsHash(def);
  mkdirSync(o.outDir, { recursive: true });
  const perSeed: SeedRulesResult[] = [];
  const machines: SeedMachine[] = [];
  for (let seed = 1; seed <= o.seeds; seed++) {
    const path = seedRecordPath(o.outDir, seed);
    const read = () => readExitRulesRecord(def, o.outDir, seed);
    if (keepRecordedSeed(o, def.name, seed, read, perSeed, machines)) continue;
    const modelDir = join(sourceDir, `seed-${seed}`, "gate2", "final");
    if (!existsSync(join(modelDir, "model.safetensors")))
      throw new CliError(
        `${def.name}: seed ${seed}'s model ${modelDir} is gone (its ${def.source.name} record stands for it, not its weights): run \`looplm reproduce ${def.source.name} --overwrite\` with this --out to train it again`,
      );
    o.log?.(`${def.name} · seed ${seed}/${o.seeds}: every rule on ${modelDir}`);
    const model = loadCheckpoint(modelDir);
    const opts = { count: def.source.evalCount, batchSize: GATE_EVAL_BATCH };
    const evaluate = (batches: Batch[]) =>
      evaluateOnBackend(o.backend, model, batches, task.metric, {
        exits: def.rules,
        score: (b, p) => task.score(b, p),
      });
    const whole = await evaluate(task.evalSet(opts));
    const byHops: SeedRulesResult["byHops"] = [];
    if (task instanceof PHopTask && task.mixedHops)
      for (let p = 1; p <= task.hops; p++) {
        const part = task.evalSetOfHops(opts, p);
        if (part.length === 0) continue;
        const h = await evaluate(part);
        const count = h.metric === "accuracy" ? h.examples : h.tokens;
        byHops.push({ hops: p, count, perStep: perStep(h), rules: points(def.rules, h) });
      }
    o.log?.(`${def.name} · seed ${seed}/${o.seeds}: decode time per token of every rule`);
    const timingSet = task.evalSet({ count: def.timingRows, batchSize: 1 });
    const timing = withKernels(o.backend.kernels, () => timeRules(model, def.rules, timingSet));
    const result: SeedRulesResult = {
      metric: whole.metric,
      perStep: perStep(whole),
      rules: points(def.rules, whole),
      byHops,
      timing,
    };
    const machine = await seedMachine(o.backend, "here");
    const record: ExitRulesRecord = { study: def.name, seed, settings, result, machine };
    writeJsonFile(path, record);
    perSeed.push(result);
    machines.push(machine);
  }
  return { perSeed, machines, sourceDir };
}
