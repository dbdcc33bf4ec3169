/* `looplm worker`: train queued jobs (from `looplm sweep --queue` or `looplm reproduce --queue`) until stopped. */
import { availableParallelism } from "node:os";
import type { Command } from "commander";
import type { Backend } from "../../backend.js";
import { parseQueueUrl } from "../../queue/connection.js";
import { queueSecret, SECRET_ENV } from "../../queue/job-signature.js";
import { runTrainingChild } from "../../queue/train-child.js";
import type { TrainingJobData } from "../../queue/training-job.js";
import { runQueueWorker } from "../../queue/worker.js";
import { checkThreadCount, commandBackend, needsKernels } from "../compute.js";
import { CliError, intFlag } from "../errors.js";
import { withInterrupts } from "../interrupt.js";

interface Flags {
  queue: string;
  backend?: Backend;
  concurrency: number;
  threads?: number;
  lockSeconds: number;
  secret?: string;
}

export function registerWorker(program: Command): void {
  // (its jobs train in child processes; this one checks that --backend starts here)
  needsKernels(program.command("worker"), { threads: false })
    .description(
      "Train jobs from a Redis queue (looplm sweep --queue, looplm reproduce --queue) in run folders on a shared filesystem",
    )
    .requiredOption("--queue <url>", "Redis holding the queue: redis://[:password@]host:port[/db]")
    .addOption(intFlag("--concurrency <n>", "jobs trained at once", 1, 1))
    .addOption(
      intFlag("--threads <n>", "compute threads per job (default: cores / concurrency)", 1),
    )
    .addOption(
      intFlag(
        "--lock-seconds <s>",
        "how long a job stays claimed after its worker stops heart-beating (killed, machine lost)",
        2,
        30,
      ),
    )
    .option(
      "--secret <s>",
      `train only jobs signed with this shared secret (the coordinator's --secret); default: $${SECRET_ENV}`,
    )
    .addHelpText(
      "after",
      `
Every job must be the one its sweep recorded in its run folder (queue-job.json): other jobs are
refused in one line, and a finished member is never trained again.

Ctrl-C or SIGTERM checkpoints every job at its current step and hands it back to the queue;
a second signal stops at once (the jobs resume from their last periodic checkpoint).

Examples:
  looplm worker --queue redis://127.0.0.1:6379
  looplm worker --queue redis://127.0.0.1:6379 --backend portable   # jobs that name no backend
  looplm worker --queue redis://:secret@10.0.0.5:6379/2 --concurrency 2 --threads 4`,
    )
    .action((f: Flags) => {
      if (f.threads !== undefined) checkThreadCount(f.threads, "--threads");
      const address = parseQueueUrl(f.queue);
      const secret = queueSecret(f.secret);
      return withInterrupts("looplm worker", (signal) =>
        runQueueWorker({
          address,
          concurrency: f.concurrency,
          threads: f.threads ?? Math.max(1, Math.floor(availableParallelism() / f.concurrency)),
          lockSeconds: f.lockSeconds,
          backend: f.backend,
          secret,
          signal,
          log: (l) => process.stderr.write(`${l}\n`),
        }),
      );
    });
  // The process a worker starts per job; not for people.
  needsKernels(program.command("worker-job", { hidden: true }))
    .requiredOption("--job <json>", "the job's data")
    .action(async (f: { job: string }, cmd: Command) => {
      let d: TrainingJobData;
      try {
        d = JSON.parse(f.job) as TrainingJobData;
      } catch {
        throw new CliError("worker-job: --job is not JSON");
      }
      // (main would turn a returned exit code into 0)
      const code = await runTrainingChild(d, commandBackend(cmd));
      if (code !== 0) process.exit(code);
    });
}
