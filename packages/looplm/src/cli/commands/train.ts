/* `looplm train`: train a looped model on a task in a run folder (pretrain, gate1, gate2). */
import { isAbsolute, join, relative, resolve } from "node:path";
import { openRunFolder, resumeTrainOptions } from "@loop/train/node";
import type { Command } from "commander";
import type { Backend } from "../../backend.js";
import { commandBackend, needsKernels, useBackend } from "../compute.js";
import { asCliError, CliError } from "../errors.js";
import { withInterrupts } from "../interrupt.js";
import { addModelOptions, buildModelConfig, type ModelFlags } from "../options/model.js";
import {
  addTaskOptions,
  buildTask,
  fullSizeNotice,
  type TaskFlags,
  taskInfo,
} from "../options/task.js";
import {
  addTrainOptions,
  buildTrainOptions,
  type TrainFlags,
  warmupCutNote,
} from "../options/train.js";
import { recordFlags, resumeFlags } from "../resume-flags.js";
import { trainJob } from "../run-training.js";

type Flags = TaskFlags &
  ModelFlags &
  TrainFlags & {
    out: string;
    resume: boolean;
    overwrite: boolean;
    from?: string;
    backend?: Backend;
    verbose?: boolean;
  };

/** `--out` must not be (or contain) the run that `--from` reads: training would erase it. */
function checkFromOutside(from: string, out: string): void {
  const rel = relative(resolve(out), resolve(from));
  if (rel === "" || (!rel.startsWith("..") && !isAbsolute(rel)))
    throw new CliError(
      `--out ${out} is the run that --from ${from} belongs to: training there would erase it; choose another --out`,
    );
}

/** The gate stages continue a trained model, so they need `--from`. */
function checkStageFrom(f: Pick<Flags, "stage" | "from">): void {
  if (f.stage !== "pretrain" && !f.from)
    throw new CliError(
      `--stage ${f.stage} continues a trained model: pass --from <checkpoint dir> (e.g. <run>/final)`,
    );
}

export async function runTrain(typed: Flags, cmd: Command): Promise<void> {
  if (typed.resume && typed.overwrite)
    throw new CliError("--resume and --overwrite exclude each other: choose one");
  if (!typed.resume && !typed.task)
    throw new CliError(
      "train needs --task <name>: mano | phop | lm (or --resume to continue the run in --out); see `looplm train --help`",
    );
  if (typed.from) checkFromOutside(typed.from, typed.out);
  if (!typed.resume) checkStageFrom(typed);
  const notice = typed.resume
    ? null
    : fullSizeNotice(typed, (o) => cmd.getOptionValueSource(o) !== "default");
  if (notice) process.stderr.write(`looplm: ${notice}\n`);
  // A new run's options are checked before its folder is created.
  const fresh = typed.resume ? null : buildTrainOptions(typed);
  // Lock (and create) the run folder before any work: a busy, impossible or already used --out
  // fails now, not after building the task.
  const folder = asCliError(() =>
    openRunFolder(typed.out, { resume: typed.resume, overwrite: typed.overwrite }),
  );
  try {
    // (said once the run folder is taken: a refused --out is the only line then)
    const cut = fresh && warmupCutNote("train", typed);
    if (cut) process.stderr.write(`looplm: ${cut}\n`);
    const runJson = join(typed.out, "run.json");
    const f = folder.info ? resumeFlags(cmd, typed, folder.info.flags, runJson) : typed;
    // A resumed run stays on the backend it was started with, unless --backend is typed again.
    let backend = commandBackend(cmd);
    if (f.backend !== typed.backend) {
      backend.stop();
      backend = await useBackend(f.backend, typed.verbose === true);
    }
    checkStageFrom(f);
    let train = fresh ?? buildTrainOptions(f);
    if (folder.info) {
      const r = resumeTrainOptions(folder.info.train, {
        steps: f.steps,
        evalEvery: f.evalEvery,
        checkpointEvery: f.ckptEvery,
        checkpointing: f.checkpointing,
      });
      train = r.train;
      for (const n of r.notes) process.stderr.write(`looplm: ${n}\n`);
    }
    const task = await buildTask(f);
    const config = f.from ? null : buildModelConfig(f, task.vocabSize);
    const res = await withInterrupts(`looplm train --out ${typed.out} --resume`, (signal) =>
      trainJob({
        runDir: f.out,
        task,
        taskInfo: taskInfo(f),
        config,
        from: f.from,
        train,
        evalCount: f.evalCount,
        backend,
        resume: f.resume,
        signal,
        info: { flags: recordFlags(f) },
        label: `${f.stage} ${task.name}`,
      }),
    );
    const ev = res.lastEval;
    const metric = ev
      ? ` ${ev.metric} per loop step: ${ev.per_step.map((v) => (ev.metric === "accuracy" ? `${(100 * v).toFixed(1)}%` : v.toFixed(2))).join(" ")}`
      : "";
    process.stdout.write(
      `trained ${res.steps} steps, final loss ${res.lastLoss.toFixed(4)};${metric}\ncheckpoint: ${res.finalDir}\n`,
    );
  } finally {
    folder.release();
  }
}

export function registerTrain(program: Command): void {
  const cmd = needsKernels(program.command("train")).description(
    "Train a looped model on mano, p-hop or a text corpus",
  );
  addTaskOptions(cmd, "unless --resume");
  addModelOptions(cmd);
  addTrainOptions(cmd);
  cmd
    .requiredOption("--out <dir>", "run folder (run.json, log.jsonl, checkpoints/, final/)")
    .option(
      "--resume",
      "continue the run in --out from its last valid checkpoint, with the settings in its run.json (only --steps, --eval-every, --eval-count, --ckpt-every, --checkpointing, --backend may change)",
      false,
    )
    .option(
      "--overwrite",
      "replace the run already in --out (its log and weights are deleted)",
      false,
    )
    .option("--from <dir>", "start from this checkpoint folder (gate1/gate2 stages)")
    .addHelpText(
      "after",
      `
Examples:
  looplm train --task phop --length 32 --hops 4 --layers 1 --loops 4 --d-model 32 --steps 600 --out runs/phop-1x4
  looplm train --task mano --max-ops 10 --layers 4 --loops 6 --d-model 128 --steps 20000 --out runs/mano-4x6
  looplm train --task mano --max-ops 10 --stage gate1 --from runs/mano-4x6/final --steps 2000 --out runs/mano-4x6-g1
  looplm train --task mano --max-ops 10 --stage gate2 --from runs/mano-4x6-g1/final --steps 1000 --out runs/mano-4x6-g2
  looplm train --out runs/phop-1x4 --resume                # continue an interrupted run exactly
  looplm train --out runs/phop-1x4 --resume --steps 2000   # train a finished run further`,
    )
    .action(runTrain);
}
