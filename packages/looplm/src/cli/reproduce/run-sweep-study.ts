/*
 * Run a sweep study: every arm (one `runSweep`, the machinery behind `looplm sweep`) for every
 * seed, seeds outermost so that a partial run has whole seeds; then aggregate over seeds and
 * judge the claims. Folder layout: <out>/<arm>/seed-<k>/ is an ordinary sweep folder. With
 * `jobs` > 1 the sweeps train first in child processes (parallel-arms.ts), with `queue` on
 * `looplm worker`s (queued-arms.ts), and are read back. Each finished seed is kept in
 * <out>/seed-<k>.json (seed-record.ts), which a resumed run reads instead of the seed's folders.
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
import { armSeedDir, armSweepJob, TaskCache, taskFlags } from "./arm-inputs.js";
import { clozeSet, piqaSet, scoreMembers, scorePerLength } from "./downstream.js";
import { type CliLauncher, trainArmsInParallel } from "./parallel-arms.js";
import { type StudyQueue, trainArmsOnQueue } from "./queued-arms.js";
import { commitAtStart, type SeedMachine, seedMachine } from "./seed-machine.js";
import {
  type ArmRecord,
  checkSameSizes,
  checkSeedRecordTargets,
  readSeedRecord,
  seedsToTrain,
  writeSeedRecord,
} from "./seed-record.js";
import { armFolderMode, waitForSharedSweep } from "./shared-arm.js";
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
  /** Per seed: where it was trained (undefined: a record from before records named it). */
  machines: (SeedMachine | undefined)[];
}

export { armArgs, armCommand, seedDir } from "./arm-inputs.js";

export async function runSweepStudy(def: StudyDef, o: StudyRunOptions): Promise<SweepStudyResult> {
  checkSeedRecordTargets(o.outDir, o.seeds);
  commitAtStart();
  const tasks = new TaskCache();
  // finished seeds' records are read only when resuming (the queue always continues)
  const useRecords = o.resume || o.queue !== undefined;
  // seeds whose record this run has written already (--jobs): what it holds
  const kept = new Map<number, { arms: Record<string, ArmRecord>; machine: SeedMachine }>();
  if (o.queue) {
    if (o.overwrite)
      throw new Error("runSweepStudy: a queued study continues its folders; overwrite is refused");
    const seeds = seedsToTrain(def, { ...o, resume: true });
    await trainArmsOnQueue(def, { ...o, seeds, queue: o.queue, tasks });
  } else if ((o.jobs ?? 1) > 1) {
    // each seed's record is kept as soon as its sweeps have finished, so that a later failure
    // or interrupt loses no finished seed
    const read = { ...o, resume: true, overwrite: false };
    const onSeedDone = async (seed: number) => {
      const arms = await trainSeed(def, seed, read, tasks);
      const machine = await seedMachine(o.backend, "here");
      writeSeedRecord(def, o.outDir, seed, arms, machine);
      kept.set(seed, { arms, machine });
    };
    await trainArmsInParallel(def, {
      ...o,
      seeds: seedsToTrain(def, o),
      jobs: o.jobs!,
      onSeedDone,
    });
  }
  // every sweep has finished: read them back (and score downstream) here
  if (o.queue || (o.jobs ?? 1) > 1) o = { ...o, resume: true, overwrite: false };
  const perSeed: Map<string, SweepFile>[] = [];
  const downstream: SeedDownstream[] = [];
  const cloze: SeedDownstream[] = [];
  const perLength: SeedPerLength[] = [];
  const machines: (SeedMachine | undefined)[] = [];
  const fromRecord: boolean[] = [];
  for (let seed = 1; seed <= o.seeds; seed++) {
    // a finished seed's record (seed-record.ts) stands for its folders, which may be elsewhere
    const record = kept.get(seed) ?? (useRecords ? readSeedRecord(def, o.outDir, seed) : null);
    const arms = record?.arms ?? (await trainSeed(def, seed, o, tasks));
    fromRecord.push(record !== null);
    if (record) machines.push(record.machine);
    else {
      const machine = await seedMachine(o.backend, o.queue ? "queue" : "here");
      writeSeedRecord(def, o.outDir, seed, arms, machine);
      machines.push(machine);
    }
    const pick = <K extends keyof ArmRecord>(k: K) => {
      const m = new Map<string, NonNullable<ArmRecord[K]>>();
      for (const a of def.arms) {
        const v = arms[a.id]![k];
        if (v) m.set(a.id, v);
      }
      return m;
    };
    perSeed.push(pick("sweep"));
    downstream.push(pick("downstream"));
    cloze.push(pick("cloze"));
    perLength.push(pick("perLength"));
  }
  checkSameSizes(o.outDir, perSeed, fromRecord);
  const rows = aggregateSeeds(
    def.arms.map((a) => a.id),
    perSeed,
    downstream,
    cloze,
    perLength,
  );
  return { rows, verdicts: def.claims.map((c) => claimVerdict(c, rows)), perSeed, machines };
}

/** Train (or continue) and score every arm of one seed; what its record keeps. */
async function trainSeed(
  def: StudyDef,
  seed: number,
  o: StudyRunOptions,
  tasks: TaskCache,
): Promise<Record<string, ArmRecord>> {
  // the scoring runs on this process's backend's CPU kernels
  const { kernels } = o.backend;
  const arms: Record<string, ArmRecord> = {};
  for (const arm of def.arms) {
    o.log?.(`${def.name} · seed ${seed}/${o.seeds} · ${arm.id}`);
    const flags = taskFlags(arm.task);
    const task = await tasks.get(flags);
    const dir = armSeedDir(o.outDir, arm, seed);
    await waitForSharedSweep(def, arm, dir, o);
    const res = await runSweep({
      ...armSweepJob(arm, seed, o.outDir, task),
      backend: o.backend,
      ...armFolderMode(arm, o),
      signal: o.signal,
      log: o.log,
    });
    const labels = res.sweep.rows.map((r) => r.label);
    const rec: ArmRecord = { sweep: res.sweep };
    if (arm.mc)
      rec.downstream = await scoreMembers(dir, labels, piqaSet(arm.mc), task, kernels, o.log);
    if (arm.cloze) {
      const set = await clozeSet(flags.corpus, arm.cloze);
      rec.cloze = await scoreMembers(dir, labels, set, task, kernels, o.log);
    }
    if (arm.perLength)
      rec.perLength = await scorePerLength(dir, labels, arm.perLength, task, kernels, o.log);
    arms[arm.id] = rec;
  }
  return arms;
}
