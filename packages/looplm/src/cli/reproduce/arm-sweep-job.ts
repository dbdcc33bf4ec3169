/**
 * One (arm, seed) sweep as `looplm sweep` takes it, whether it trains in this process
 * (run-sweep-study.ts) or on the queue (queued-arms.ts): the two must agree, since a queued study
 * reads back the very folders and members it put on the queue.
 */
import type { Task } from "@loop/tasks";
import { taskInfo } from "../options/task.js";
import type { SweepJob } from "../sweep-runner.js";
import { seedDir } from "./arm-command.js";
import { modelConfig, taskFlags, trainFlags, trainOptions } from "./arm-inputs.js";
import type { ArmDef } from "./study-types.js";

export type ArmSweepJob = Omit<SweepJob, "resume" | "log" | "backend" | "overwrite" | "signal">;

export function armSweepJob(arm: ArmDef, seed: number, outDir: string, task: Task): ArmSweepJob {
  return {
    outDir: seedDir(outDir, arm.id, seed),
    protocol: arm.protocol,
    task,
    taskInfo: taskInfo(taskFlags(arm.task)),
    base: modelConfig(arm.model, arm.base, 1, task.vocabSize),
    loops: arm.loops,
    train: trainOptions(arm.train, seed),
    evalCount: trainFlags(arm.train, seed).evalCount,
  };
}
