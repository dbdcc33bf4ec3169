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
import { readJsonFile } from "@loop/tensor/node";
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
  type SeedGateResult,
} from "./gate-frontier.js";
import { GATE_EVAL_BATCH, type GateStudyDef } from "./gate-study-types.js";
import type { StudyRunOptions } from "./run-sweep-study.js";

export interface GateStudyResult {
  frontier: FrontierRow[];
  verdict: GateVerdict;
  perSeed: SeedGateResult[];
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
  const flags = taskFlags(def.task);
  const task = await new TaskCache().get(flags);
  const perSeed: SeedGateResult[] = [];
  for (let seed = 1; seed <= o.seeds; seed++) {
    const dir = join(o.outDir, `seed-${seed}`);
    const evalPath = join(dir, "eval.json");
    if (o.resume && existsSync(evalPath)) {
      o.log?.(`exit-gate · seed ${seed}/${o.seeds}: already evaluated, kept`);
      perSeed.push(readJsonFile<SeedGateResult>(evalPath));
      continue;
    }
    let from: string | undefined;
    for (const stage of STAGES) {
      const runDir = join(dir, stage);
      const stageFlags: Partial<TrainFlags> = { ...def[stage], stage };
      if (!(o.resume && existsSync(join(runDir, "final", "model.safetensors")))) {
        o.log?.(`exit-gate · seed ${seed}/${o.seeds} · ${stage}`);
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
    const batches = task.evalSet({ count: def.evalCount, batchSize: GATE_EVAL_BATCH });
    const r = await evaluateOnBackend(o.backend, model, batches, task.metric, {
      qs: def.qs,
      score: (b, p) => task.score(b, p),
    });
    const m = metricSection(r);
    const res: SeedGateResult = { metric: m.metric, perStep: m.per_step, gated: m.gated };
    writeJsonFile(evalPath, res);
    perSeed.push(res);
  }
  const frontier = gateFrontier(perSeed);
  return { frontier, verdict: gateVerdict(frontier, perSeed[0]!.metric), perSeed };
}
