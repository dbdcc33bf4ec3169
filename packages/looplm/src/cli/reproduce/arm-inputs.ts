/*
 * A study's declarative settings → what the trainers take, through the same flag defaults and
 * builders as `looplm train` and `looplm sweep` (so a study member equals the sweep command that
 * docs/results.md prints for it); and the `looplm sweep` command behind each (arm, seed): printed
 * beside the results, and what `--jobs` runs in child processes.
 */
import { dirname, join } from "node:path";
import type { Task } from "@loop/tasks";
import type { TrainOptions } from "@loop/train";
import { buildModelConfig, MODEL_DEFAULTS, type ModelFlags } from "../options/model.js";
import { buildTask, TASK_DEFAULTS, type TaskFlags, taskInfo } from "../options/task.js";
import { buildTrainOptions, TRAIN_DEFAULTS, type TrainFlags } from "../options/train.js";
import type { SweepJob } from "../sweep-runner.js";
import type { ArmDef } from "./study-types.js";

export function taskFlags(t: Partial<TaskFlags> & Pick<TaskFlags, "task">): TaskFlags {
  return { ...TASK_DEFAULTS, ...t };
}

export function trainFlags(t: Partial<TrainFlags>, seed: number): TrainFlags {
  return { ...TRAIN_DEFAULTS, ...t, seed };
}

export function trainOptions(t: Partial<TrainFlags>, seed: number): TrainOptions {
  return buildTrainOptions(trainFlags(t, seed));
}

export function modelConfig(
  m: Partial<ModelFlags>,
  layers: number,
  loops: number,
  vocabSize: number,
  exitGate = false,
) {
  return buildModelConfig({ ...MODEL_DEFAULTS, ...m, layers, loops, exitGate }, vocabSize);
}

/** Tasks built once per distinct setting (an LM task trains its tokenizer when built). */
export class TaskCache {
  private readonly cache = new Map<string, Promise<Task>>();
  get(flags: TaskFlags): Promise<Task> {
    const key = JSON.stringify(taskInfo(flags));
    let t = this.cache.get(key);
    if (!t) {
      t = buildTask(flags);
      this.cache.set(key, t);
    }
    return t;
  }
}

/** The `looplm` flags that set a value, as arguments (a `true` flag stands alone). */
export function flagArgs(values: Record<string, unknown>): string[] {
  return Object.entries(values)
    .filter(([, v]) => v !== undefined && v !== false)
    .flatMap(([k, v]) => {
      const flag = `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      return v === true ? [flag] : [flag, String(v)];
    });
}

export function seedDir(outDir: string, arm: string, seed: number): string {
  return join(outDir, arm, `seed-${seed}`);
}

/**
 * The sweep folder of `arm` for `seed` in the study folder `outDir` (`<out>/<study>`): its own
 * `<arm>/seed-<k>`, or the lending study's for a shared arm (`<out>/<study>/<arm>/seed-<k>`).
 */
export function armSeedDir(outDir: string, arm: ArmDef, seed: number): string {
  const s = arm.sharedWith;
  return s ? seedDir(join(dirname(outDir), s.study), s.arm, seed) : seedDir(outDir, arm.id, seed);
}

/**
 * The sweep flags of an arm without the seed and folder: two arms with equal flags train equal
 * members (what a shared arm's check compares).
 */
export function armSweepFlags(arm: ArmDef): string[] {
  return [
    ...["--protocol", arm.protocol],
    ...flagArgs({ ...arm.task }),
    ...["--base", String(arm.base), "--loops", arm.loops.join(",")],
    ...flagArgs({ ...arm.model }),
    ...flagArgs({ ...arm.train }),
  ];
}

/** The arguments after `looplm` of the `looplm sweep` command that trains one arm for one seed. */
export function armArgs(arm: ArmDef, seed: number, outDir: string): string[] {
  return [
    "sweep",
    ...armSweepFlags(arm),
    ...["--seed", String(seed), "--out", armSeedDir(outDir, arm, seed)],
  ];
}

/** The same command as text (what the study runs, and a child process runs exactly). */
export function armCommand(arm: ArmDef, seed: number, outDir: string): string {
  return `looplm ${armArgs(arm, seed, outDir).join(" ")}`;
}

/**
 * One (arm, seed) sweep as `looplm sweep` takes it, whether it trains in this process
 * (run-sweep-study.ts) or on the queue (queued-arms.ts): the two must agree, since a queued study
 * reads back the very folders and members it put on the queue.
 */
export function armSweepJob(
  arm: ArmDef,
  seed: number,
  outDir: string,
  task: Task,
): Omit<SweepJob, "resume" | "log" | "backend" | "overwrite" | "signal"> {
  return {
    outDir: armSeedDir(outDir, arm, seed),
    protocol: arm.protocol,
    task,
    taskInfo: taskInfo(taskFlags(arm.task)),
    base: modelConfig(arm.model, arm.base, 1, task.vocabSize),
    loops: arm.loops,
    train: trainOptions(arm.train, seed),
    evalCount: trainFlags(arm.train, seed).evalCount,
  };
}
