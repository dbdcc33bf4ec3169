/** The exit-gate study: one model trained through the three stages, then its depth frontier. */
import type { ModelFlags } from "../options/model.js";
import type { TaskFlags, TaskName } from "../options/task.js";
import type { TrainFlags } from "../options/train.js";

export interface GateStudyDef {
  name: "exit-gate";
  title: string;
  notes: string;
  task: Partial<TaskFlags> & { task: TaskName };
  model: Partial<ModelFlags>;
  layers: number;
  loops: number;
  pretrain: Partial<TrainFlags>;
  gate1: Partial<TrainFlags>;
  gate2: Partial<TrainFlags>;
  evalCount: number;
  /** Exit thresholds of the q sweep. */
  qs: number[];
  /** The paper's comparison, as printed. */
  paper: string;
}

/**
 * Batch size of the frontier's evaluation, in the study and in its printed `looplm eval` command
 * (the scores do not depend on it: each sequence is scored on its own).
 */
export const GATE_EVAL_BATCH = 64;
