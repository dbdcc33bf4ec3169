/**
 * A study's declarative settings → what the trainers take, through the same flag defaults and
 * builders as `looplm train` and `looplm sweep` (so a study member equals the sweep command that
 * docs/results.md prints for it).
 */
import type { Task } from "@loop/tasks";
import type { TrainOptions } from "@loop/train";
import { buildModelConfig, MODEL_DEFAULTS, type ModelFlags } from "../options/model.js";
import { buildTask, TASK_DEFAULTS, type TaskFlags, taskInfo } from "../options/task.js";
import { buildTrainOptions, TRAIN_DEFAULTS, type TrainFlags } from "../options/train.js";

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

/** The same flags as text, for the command line printed beside the results. */
export function flagLine(values: Record<string, unknown>): string {
  return flagArgs(values).join(" ");
}
