/*
 * The exit-gate study: one model trained through the three stages, then its depth frontier; and
 * the `looplm train` and `looplm eval` commands behind one of its seeds: printed beside its
 * results, so that a reader can rerun (or extend) one seed stage by stage. They give the numbers
 * the study gives (reproduce.test.ts runs them and compares the model bytes).
 */
import { join } from "node:path";
import type { Stage } from "@loop/train";
import type { ModelFlags } from "../options/model.js";
import type { TaskFlags, TaskName } from "../options/task.js";
import type { TrainFlags } from "../options/train.js";
import { flagArgs } from "./arm-inputs.js";

export interface GateStudyDef {
  /** "exit-gate" (p-hop at one p), "gate-mixed" (p drawn per sequence), "lm-gate" (SOTU). */
  name: "exit-gate" | "gate-mixed" | "lm-gate";
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
  /**
   * A mixed-difficulty p-hop task (`mixedHops`): also evaluate every difficulty p = 1..hops
   * apart (the fixed exits and the gate at every q on the eval rows of that p).
   */
  byHops?: boolean;
}

/**
 * Batch size of the frontier's evaluation, in the study and in its printed `looplm eval` command
 * (the scores do not depend on it: each sequence is scored on its own).
 */
export const GATE_EVAL_BATCH = 64;

/** Each command's arguments after `looplm`: pretrain, gate1, gate2, then the evaluation. */
export function gateArgs(def: GateStudyDef, seed: number, outDir: string): string[][] {
  const dir = join(outDir, `seed-${seed}`);
  const task = flagArgs({ ...def.task });
  const stage = (s: Stage, from: Stage | null, model: string[]) => [
    "train",
    ...task,
    ...model,
    ...flagArgs({ ...def[s] }),
    ...["--stage", s, "--seed", String(seed)],
    ...(from ? ["--from", join(dir, from, "final")] : []),
    ...["--out", join(dir, s)],
  ];
  const model = [
    ...["--layers", String(def.layers), "--loops", String(def.loops)],
    ...flagArgs({ ...def.model }),
  ];
  return [
    stage("pretrain", null, model),
    stage("gate1", "pretrain", []),
    stage("gate2", "gate1", []),
    [
      "eval",
      ...["--model", join(dir, "gate2", "final")],
      ...["--count", String(def.evalCount), "--batch-size", String(GATE_EVAL_BATCH)],
      ...["--q-sweep", def.qs.join(",")],
    ],
  ];
}

/** The same commands as lines. */
export function gateCommands(def: GateStudyDef, seed: number, outDir: string): string[] {
  return gateArgs(def, seed, outDir).map((a) => `looplm ${a.join(" ")}`);
}
