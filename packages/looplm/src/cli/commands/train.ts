/** `looplm train`: train a looped model on a task in a run folder (pretrain, gate1, gate2). */
import type { Command } from "commander";
import { needsKernels } from "../compute.js";
import { CliError } from "../errors.js";
import { addModelOptions, buildModelConfig, type ModelFlags } from "../options/model.js";
import { addTaskOptions, buildTask, type TaskFlags, taskInfo } from "../options/task.js";
import { addTrainOptions, buildTrainOptions, type TrainFlags } from "../options/train.js";
import { trainJob } from "../run-training.js";

type Flags = TaskFlags & ModelFlags & TrainFlags & { out: string; resume: boolean; from?: string };

export async function runTrain(f: Flags): Promise<void> {
  if (f.stage !== "pretrain" && !f.from && !f.resume) {
    throw new CliError(
      `--stage ${f.stage} continues a trained model: pass --from <checkpoint dir> (e.g. <run>/final)`,
    );
  }
  const task = await buildTask(f);
  const train = buildTrainOptions(f);
  const config = f.from ? null : buildModelConfig(f, task.vocabSize);
  const res = trainJob({
    runDir: f.out,
    task,
    taskInfo: taskInfo(f),
    config,
    from: f.from,
    train,
    evalCount: f.evalCount,
    resume: f.resume,
    label: `${f.stage} ${task.name}`,
  });
  const ev = res.lastEval;
  const metric = ev
    ? ` ${ev.metric} per loop step: ${ev.per_step.map((v) => (ev.metric === "accuracy" ? `${(100 * v).toFixed(1)}%` : v.toFixed(2))).join(" ")}`
    : "";
  process.stdout.write(
    `trained ${res.steps} steps, final loss ${res.lastLoss.toFixed(4)};${metric}\ncheckpoint: ${res.finalDir}\n`,
  );
}

export function registerTrain(program: Command): void {
  const cmd = needsKernels(program.command("train")).description(
    "Train a looped model on mano, p-hop or a text corpus",
  );
  addTaskOptions(cmd);
  addModelOptions(cmd);
  addTrainOptions(cmd);
  cmd
    .requiredOption("--out <dir>", "run folder (log.jsonl, checkpoints/, final/)")
    .option("--resume", "continue the run in --out from its last checkpoint", false)
    .option("--from <dir>", "start from this checkpoint folder (gate1/gate2 stages)")
    .addHelpText(
      "after",
      `
Examples:
  looplm train --task phop --length 32 --hops 4 --layers 1 --loops 4 --d-model 32 --steps 600 --out runs/phop-1x4
  looplm train --task mano --max-ops 10 --layers 4 --loops 6 --d-model 128 --steps 20000 --out runs/mano-4x6
  looplm train --task mano --max-ops 10 --stage gate1 --from runs/mano-4x6/final --steps 2000 --out runs/mano-4x6-g1
  looplm train --task mano --max-ops 10 --stage gate2 --from runs/mano-4x6-g1/final --steps 1000 --out runs/mano-4x6-g2
  looplm train ... --out runs/x --resume        # continue an interrupted run exactly`,
    )
    .action(runTrain);
}
