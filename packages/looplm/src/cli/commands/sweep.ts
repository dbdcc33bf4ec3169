/* `looplm sweep`: train an iso-parameter or iso-FLOPs family and compare it. */
import type { Command } from "commander";
import type { Backend } from "../../backend.js";
import { parseQueueUrl } from "../../queue/connection.js";
import { queueSecret, SIGN_HELP } from "../../queue/job-signature.js";
import { runQueuedSweep } from "../../queue/queued-sweep.js";
import { commandBackend, needsKernels } from "../compute.js";
import { CliError, choiceOption, intFlag } from "../errors.js";
import { withInterrupts } from "../interrupt.js";
import {
  addModelOptions,
  buildModelConfig,
  type ModelFlags,
  parseIntList,
} from "../options/model.js";
import { addTaskOptions, buildTask, type TaskFlags, taskInfo } from "../options/task.js";
import {
  addTrainOptions,
  buildTrainOptions,
  type TrainFlags,
  warmupCutNote,
} from "../options/train.js";
import {
  checkDistinctLoops,
  openSweepFolder,
  PROTOCOLS,
  type Protocol,
  runSweep,
} from "../sweep-runner.js";

type Flags = TaskFlags &
  ModelFlags &
  TrainFlags & {
    protocol: Protocol;
    base: number;
    loopsList: string;
    out: string;
    resume: boolean;
    overwrite: boolean;
    queue?: string;
    secret?: string;
    backend?: Backend;
  };

const protocol = choiceOption<Protocol>("--protocol", PROTOCOLS);

export async function runSweepCommand(f: Flags, cmd: Command): Promise<void> {
  const loops = parseIntList("--loops", f.loopsList);
  if (loops.some((r) => r < 1))
    throw new CliError(`--loops entries must be ≥ 1, got "${f.loopsList}"`);
  checkDistinctLoops(loops);
  const train = buildTrainOptions(f);
  const cut = warmupCutNote("sweep", f);
  if (cut) process.stderr.write(`looplm: ${cut}\n`);
  const address = f.queue ? parseQueueUrl(f.queue) : null;
  if (f.secret !== undefined && !address)
    throw new CliError("--secret signs the jobs of --queue: give --queue redis://… too");
  const secret = address ? queueSecret(f.secret) : undefined;
  if (address && f.overwrite)
    throw new CliError(
      "--overwrite does not combine with --queue: workers resume what a run folder holds; remove the sweep folder or choose another --out",
    );
  // The folder is checked and locked before the (possibly long) task set-up. With --queue this
  // process only enqueues and watches; the workers lock each run folder as they train it.
  const release = address ? () => {} : openSweepFolder(f.out, f);
  try {
    const task = await buildTask(f);
    const base = buildModelConfig({ ...f, layers: f.base, loops: 1 }, task.vocabSize);
    const job = {
      outDir: f.out,
      protocol: f.protocol,
      task,
      taskInfo: taskInfo(f),
      base,
      loops,
      train,
      evalCount: f.evalCount,
    };
    const res = address
      ? await withInterrupts(
          "the same looplm sweep command",
          (signal) => runQueuedSweep(job, f, address, f.backend, secret, signal),
          { watching: true },
        )
      : await withInterrupts("the same looplm sweep command with --resume", (signal) =>
          runSweep({
            ...job,
            backend: commandBackend(cmd),
            resume: f.resume,
            overwrite: f.overwrite,
            signal,
            log: (l) => process.stderr.write(`${l}\n`),
          }),
        );
    process.stdout.write(
      `\n${f.protocol} sweep on ${task.name}\n${res.table}\n${res.notes.map((n) => `${n}\n`).join("")}\nreport: ${res.reportPath}\n`,
    );
  } finally {
    release();
  }
}

export function registerSweep(program: Command): void {
  // (with --queue the workers train: this process starts no backend)
  const cmd = needsKernels(program.command("sweep"), { elsewhere: (o) => o.queue !== undefined })
    .description(
      "Train every member of an iso-parameter (N⊗R) or iso-FLOPs (N⊗R vs (N·R)⊗1) family and compare them",
    )
    .requiredOption("--protocol <p>", `protocol: ${PROTOCOLS.join(" | ")}`, protocol)
    .addOption(intFlag("--base <N>", "layers N of the looped block", 1, 1))
    .requiredOption("--loops <list>", "comma-separated loop counts R, e.g. 1,2,4");
  addTaskOptions(cmd);
  addModelOptions(cmd, false);
  addTrainOptions(cmd);
  cmd
    .requiredOption(
      "--out <dir>",
      "sweep folder (one run folder per member, sweep.json, report.html)",
    )
    .option(
      "--resume",
      "continue the sweep in --out: keep finished members, resume interrupted ones (settings must match; a larger --steps extends every member on the sweep's learning-rate schedule, as train --resume does)",
      false,
    )
    .option("--overwrite", "replace the sweep already in --out", false)
    .option(
      "--queue <url>",
      "train the members on `looplm worker`s through Redis, redis://host:port[/db]; a repeated command reuses finished members (docs/distributed.md)",
    )
    .option("--secret <s>", SIGN_HELP)
    .addHelpText(
      "after",
      `
Examples:
  looplm sweep --protocol iso-param --task phop --length 32 --hops 4 --base 1 --loops 1,4 --d-model 32 --steps 400 --out runs/phop-sweep
  looplm sweep --protocol iso-flops --task mano --max-ops 10 --base 2 --loops 1,2,4 --d-model 64 --steps 5000 --out runs/mano-isoflops
  looplm sweep --protocol iso-param --task lm --corpus sotu --seq-len 128 --base 2 --loops 1,2 --steps 2000 --out runs/lm
  looplm sweep --protocol iso-param --task phop --length 32 --hops 3 --base 1 --loops 1,2,4 --d-model 32 --steps 800 --out /shared/runs/phop --queue redis://10.0.0.5:6379`,
    )
    .action((opts: Omit<Flags, "loopsList"> & { loops: string }, cmd: Command) =>
      runSweepCommand({ ...opts, loopsList: opts.loops } as Flags, cmd),
    );
}
