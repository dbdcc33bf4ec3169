/*
 * Run the exit-gate study: per seed, pretrain → gate1 → gate2 (the stages of `looplm train`),
 * then evaluate the gated model at every loop step (fixed exit) and at every q of the sweep; then
 * the seed-aggregated depth/metric frontier and the claim's verdict.
 * Folder layout: <out>/seed-<k>/{pretrain,gate1,gate2}/ are ordinary run folders, and
 * <out>/seed-<k>/eval.json the evaluation of gate2's final model.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { metricSection } from "@loop/eval";
import { loadCheckpoint } from "@loop/looped/node";
import { PHopTask } from "@loop/tasks";
import { inputFileExists, readJsonFile } from "@loop/tensor/node";
import type { Stage } from "@loop/train";
import { writeJsonFile } from "@loop/train/node";
import { evaluateOnBackend } from "../../device-eval.js";
import { taskInfo } from "../options/task.js";
import type { TrainFlags } from "../options/train.js";
import { trainJob } from "../run-training.js";
import { modelConfig, TaskCache, taskFlags, trainFlags, trainOptions } from "./arm-inputs.js";
import {
  type FrontierRow,
  type GateVerdict,
  gateFrontier,
  gateVerdict,
  type HopsGateResult,
  type SeedGateResult,
} from "./gate-frontier.js";
import { readGateSeedRecord, writeGateSeedRecord } from "./gate-seed-record.js";
import { GATE_EVAL_BATCH, type GateStudyDef } from "./gate-study-types.js";
import type { StudyRunOptions } from "./run-sweep-study.js";
import { commitAtStart, type SeedMachine, seedMachine } from "./seed-machine.js";
import { keepRecordedSeed } from "./seed-record.js";

export interface GateStudyResult {
  frontier: FrontierRow[];
  verdict: GateVerdict;
  perSeed: SeedGateResult[];
  /** Per seed: where it was evaluated (its record's machine). */
  machines: SeedMachine[];
}

const STAGES: readonly Stage[] = ["pretrain", "gate1", "gate2"];

function hasCheckpoint(runDir: string): boolean {
  const d = join(runDir, "checkpoints");
  return existsSync(d) && readdirSync(d).length > 0;
}

export async function runGateStudy(
  def: GateStudyDef,
  o: StudyRunOptions,
): Promise<GateStudyResult> {
  commitAtStart();
  const flags = taskFlags(def.task);
  const task = await new TaskCache().get(flags);
  if (def.byHops && !(task instanceof PHopTask && task.mixedHops))
    throw new Error(`${def.name}: byHops needs a p-hop task with mixedHops, got ${task.name}`);
  const perSeed: SeedGateResult[] = [];
  const machines: SeedMachine[] = [];
  const keep = async (seed: number, res: SeedGateResult) => {
    const machine = await seedMachine(o.backend, "here");
    writeGateSeedRecord(def, o.outDir, seed, res, machine);
    perSeed.push(res);
    machines.push(machine);
  };
  for (let seed = 1; seed <= o.seeds; seed++) {
    const dir = join(o.outDir, `seed-${seed}`);
    const evalPath = join(dir, "eval.json");
    // a finished seed's record stands for its folders, which may be gone or elsewhere
    const read = () => readGateSeedRecord(def, o.outDir, seed);
    if (keepRecordedSeed(o, def.name, seed, read, perSeed, machines)) continue;
    if (o.resume && inputFileExists(evalPath)) {
      o.log?.(`${def.name} · seed ${seed}/${o.seeds}: already evaluated, kept`);
      await keep(seed, readJsonFile<SeedGateResult>(evalPath));
      continue;
    }
    let from: string | undefined;
    for (const stage of STAGES) {
      const runDir = join(dir, stage);
      const stageFlags: Partial<TrainFlags> = { ...def[stage], stage };
      if (!(o.resume && existsSync(join(runDir, "final", "model.safetensors")))) {
        o.log?.(`${def.name} · seed ${seed}/${o.seeds} · ${stage}`);
        const resume = o.resume && hasCheckpoint(runDir);
        await trainJob({
          runDir,
          task,
          taskInfo: taskInfo(flags),
          config: from ? null : modelConfig(def.model, def.layers, def.loops, task.vocabSize),
          from,
          train: trainOptions(stageFlags, seed),
          evalCount: trainFlags(stageFlags, seed).evalCount,
          backend: o.backend,
          resume,
          // with --resume, a stage that never reached a checkpoint starts again
          overwrite: o.overwrite === true || (o.resume && !resume),
          signal: o.signal,
          label: `seed ${seed} ${stage}`,
        });
      }
      from = join(runDir, "final");
    }
    const model = loadCheckpoint(from!);
    const evaluate = async (batches: ReturnType<typeof task.evalSet>) =>
      metricSection(
        await evaluateOnBackend(o.backend, model, batches, task.metric, {
          qs: def.qs,
          score: (b, p) => task.score(b, p),
        }),
      );
    const opts = { count: def.evalCount, batchSize: GATE_EVAL_BATCH };
    const m = await evaluate(task.evalSet(opts));
    const res: SeedGateResult = { metric: m.metric, perStep: m.per_step, gated: m.gated };
    if (def.byHops) {
      // each sequence is scored on its own, so the rows of one p score as they do in the whole set
      const t = task as PHopTask;
      const byHops: HopsGateResult[] = [];
      for (let p = 1; p <= t.hops; p++) {
        const part = t.evalSetOfHops(opts, p);
        if (part.length === 0) continue;
        const h = await evaluate(part);
        byHops.push({ hops: p, count: h.count, perStep: h.per_step, gated: h.gated });
      }
      res.byHops = byHops;
    }
    writeJsonFile(evalPath, res);
    await keep(seed, res);
  }
  const frontier = gateFrontier(perSeed);
  return { frontier, verdict: gateVerdict(frontier, perSeed[0]!.metric), perSeed, machines };
}
