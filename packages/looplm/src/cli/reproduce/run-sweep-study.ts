/**
 * Run a sweep study: every arm (one `runSweep`, the machinery behind `looplm sweep`) for every
 * seed, seeds outermost so that a partial run has whole seeds; then aggregate over seeds and
 * judge the claims. Folder layout: <out>/<arm>/seed-<k>/ is an ordinary sweep folder.
 */
import { join } from "node:path";
import type { SweepFile } from "@loop/eval";
import { taskInfo } from "../options/task.js";
import { runSweep } from "../sweep-runner.js";
import { aggregateSeeds, type MemberAggregate, type SeedDownstream } from "./aggregate.js";
import {
  flagLine,
  modelConfig,
  TaskCache,
  taskFlags,
  trainFlags,
  trainOptions,
} from "./arm-inputs.js";
import { scoreDownstream } from "./downstream.js";
import type { ArmDef, StudyDef } from "./study-types.js";
import { claimVerdict, type Verdict } from "./verdict.js";

export interface StudyRunOptions {
  outDir: string;
  seeds: number;
  /** Keep what finished (members, stages, evaluations) and continue what did not. */
  resume: boolean;
  /** Replace the study's runs already in `outDir`. */
  overwrite?: boolean;
  /** Stops the member in training after its current step, with a checkpoint (SIGINT/SIGTERM). */
  signal?: AbortSignal;
  log?: (line: string) => void;
}

export interface SweepStudyResult {
  rows: MemberAggregate[];
  verdicts: Verdict[];
  /** Per seed (index k → seed k + 1): arm id → sweep.json content. */
  perSeed: Map<string, SweepFile>[];
}

export function seedDir(outDir: string, arm: string, seed: number): string {
  return join(outDir, arm, `seed-${seed}`);
}

/** The `looplm sweep` command that trains one arm for one seed (what the study runs). */
export function armCommand(arm: ArmDef, seed: number, outDir: string): string {
  return `looplm sweep --protocol ${arm.protocol} ${flagLine({ ...arm.task })} --base ${arm.base} --loops ${arm.loops.join(",")} ${flagLine({ ...arm.model })} ${flagLine({ ...arm.train })} --seed ${seed} --out ${seedDir(outDir, arm.id, seed)}`;
}

export async function runSweepStudy(def: StudyDef, o: StudyRunOptions): Promise<SweepStudyResult> {
  const tasks = new TaskCache();
  const perSeed: Map<string, SweepFile>[] = [];
  const downstream: SeedDownstream[] = [];
  for (let seed = 1; seed <= o.seeds; seed++) {
    const files = new Map<string, SweepFile>();
    const scores: SeedDownstream = new Map();
    for (const arm of def.arms) {
      o.log?.(`${def.name} · seed ${seed}/${o.seeds} · ${arm.id}`);
      const flags = taskFlags(arm.task);
      const task = await tasks.get(flags);
      const res = await runSweep({
        outDir: seedDir(o.outDir, arm.id, seed),
        protocol: arm.protocol,
        task,
        taskInfo: taskInfo(flags),
        base: modelConfig(arm.model, arm.base, 1, task.vocabSize),
        loops: arm.loops,
        train: trainOptions(arm.train, seed),
        evalCount: trainFlags(arm.train, seed).evalCount,
        resume: o.resume,
        overwrite: o.overwrite,
        signal: o.signal,
        log: o.log,
      });
      files.set(arm.id, res.sweep);
      if (arm.mc) {
        const labels = res.sweep.rows.map((r) => r.label);
        const dir = seedDir(o.outDir, arm.id, seed);
        const acc = scoreDownstream(dir, labels, arm.mc, task, o.log);
        scores.set(arm.id, { name: arm.mc.name, acc });
      }
    }
    perSeed.push(files);
    downstream.push(scores);
  }
  const rows = aggregateSeeds(
    def.arms.map((a) => a.id),
    perSeed,
    downstream,
  );
  return { rows, verdicts: def.claims.map((c) => claimVerdict(c, rows)), perSeed };
}
