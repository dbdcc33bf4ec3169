/**
 * Run a sweep study: every arm (one `runSweep`, the machinery behind `looplm sweep`) for every
 * seed, seeds outermost so that a partial run has whole seeds; then aggregate over seeds and
 * judge the claims. Folder layout: <out>/<arm>/seed-<k>/ is an ordinary sweep folder. With
 * `jobs` > 1 the sweeps train first in child processes (parallel-arms.ts), with `queue` on
 * `looplm worker`s (queued-arms.ts), and are read back.
 */
import type { SweepFile } from "@loop/eval";
import type { ComputeBackend } from "../../backend.js";
import { runSweep } from "../sweep-runner.js";
import {
  aggregateSeeds,
  type MemberAggregate,
  type SeedDownstream,
  type SeedPerLength,
} from "./aggregate.js";
import { seedDir } from "./arm-command.js";
import { TaskCache, taskFlags } from "./arm-inputs.js";
import { armSweepJob } from "./arm-sweep-job.js";
import { CLOZE_NAME, scoreCloze, scoreDownstream } from "./downstream.js";
import { type CliLauncher, trainArmsInParallel } from "./parallel-arms.js";
import { scorePerLength } from "./per-length.js";
import { type StudyQueue, trainArmsOnQueue } from "./queued-arms.js";
import type { StudyDef } from "./study-types.js";
import { claimVerdict, type Verdict } from "./verdict.js";

export interface StudyRunOptions {
  outDir: string;
  seeds: number;
  /** Where this process trains and evaluates (its device when it has one). */
  backend: ComputeBackend;
  /** Keep what finished (members, stages, evaluations) and continue what did not. */
  resume: boolean;
  /** Replace the study's runs already in `outDir`. */
  overwrite?: boolean;
  /** Sweeps trained at once, each in its own process (sweep studies; default 1: in this one). */
  jobs?: number;
  /** How `jobs` > 1 starts the CLI (default: this process's own). */
  launcher?: CliLauncher;
  /** Arguments every child sweep gets (e.g. --backend). */
  childArgs?: string[];
  /**
   * Train the sweep studies' members on this Redis queue's workers (a repeated run continues
   * what the folders hold, as `sweep --queue` does; `overwrite` is refused by the command).
   */
  queue?: StudyQueue;
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

export { armArgs, armCommand, seedDir } from "./arm-command.js";

export async function runSweepStudy(def: StudyDef, o: StudyRunOptions): Promise<SweepStudyResult> {
  const tasks = new TaskCache();
  if (o.queue) {
    if (o.overwrite)
      throw new Error("runSweepStudy: a queued study continues its folders; overwrite is refused");
    await trainArmsOnQueue(def, { ...o, queue: o.queue, tasks });
  } else if ((o.jobs ?? 1) > 1) await trainArmsInParallel(def, { ...o, jobs: o.jobs! });
  // every sweep has finished: read them back (and score downstream) here
  if (o.queue || (o.jobs ?? 1) > 1) o = { ...o, resume: true, overwrite: false };
  const perSeed: Map<string, SweepFile>[] = [];
  const downstream: SeedDownstream[] = [];
  const cloze: SeedDownstream[] = [];
  const perLength: SeedPerLength[] = [];
  // the scoring below runs on this process's backend's CPU kernels
  const { kernels } = o.backend;
  for (let seed = 1; seed <= o.seeds; seed++) {
    const files = new Map<string, SweepFile>();
    const scores: SeedDownstream = new Map();
    const clozeScores: SeedDownstream = new Map();
    const lengthScores: SeedPerLength = new Map();
    for (const arm of def.arms) {
      o.log?.(`${def.name} · seed ${seed}/${o.seeds} · ${arm.id}`);
      const flags = taskFlags(arm.task);
      const task = await tasks.get(flags);
      const res = await runSweep({
        ...armSweepJob(arm, seed, o.outDir, task),
        backend: o.backend,
        resume: o.resume,
        overwrite: o.overwrite,
        signal: o.signal,
        log: o.log,
      });
      files.set(arm.id, res.sweep);
      const labels = res.sweep.rows.map((r) => r.label);
      const dir = seedDir(o.outDir, arm.id, seed);
      if (arm.mc) {
        const acc = scoreDownstream(dir, labels, arm.mc, task, kernels, o.log);
        scores.set(arm.id, { name: arm.mc.name, acc });
      }
      if (arm.cloze) {
        const acc = await scoreCloze(dir, labels, arm.cloze, flags.corpus, task, kernels, o.log);
        clozeScores.set(arm.id, { name: CLOZE_NAME, acc });
      }
      if (arm.perLength)
        lengthScores.set(
          arm.id,
          await scorePerLength(dir, labels, arm.perLength, task, kernels, o.log),
        );
    }
    perSeed.push(files);
    downstream.push(scores);
    cloze.push(clozeScores);
    perLength.push(lengthScores);
  }
  const rows = aggregateSeeds(
    def.arms.map((a) => a.id),
    perSeed,
    downstream,
    cloze,
    perLength,
  );
  return { rows, verdicts: def.claims.map((c) => claimVerdict(c, rows)), perSeed };
}
