/**
 * What a command needs from the machine, declared by the command and set up by commander's
 * preAction hook before its action runs (so `--help` and parse errors start nothing).
 * Commands marked with `needsKernels` (training and evaluation) split their large kernels over a
 * worker-thread pool, one thread per core, and switch on the native kernels (compiled from C on
 * first use, then cached; without a compiler they say so once and run on the portable ones).
 * Every other command stays single-threaded, where starting workers would cost more than it
 * saves. LOOPLM_THREADS=n chooses the thread count for any command (1 switches the pool off).
 */
import { availableParallelism } from "node:os";
import { startThreadPool } from "@loop/tensor/node";
import type { Command } from "commander";
import { enableNativeKernels } from "../native.js";

const heavy = new WeakSet<Command>();

/** Declare that `cmd` runs heavy kernels: a thread per core and the native kernels. */
export function needsKernels(cmd: Command): Command {
  heavy.add(cmd);
  return cmd;
}

async function setUp(cmd: Command): Promise<void> {
  const isHeavy = heavy.has(cmd);
  const env = process.env.LOOPLM_THREADS;
  const threads = env ? Number(env) : isHeavy ? availableParallelism() : 1;
  if (!Number.isInteger(threads) || threads < 1)
    throw new Error(`LOOPLM_THREADS must be an integer ≥ 1, got "${env}"`);
  if (threads > 1) await startThreadPool(threads);
  if (!isHeavy) return;
  const native = await enableNativeKernels();
  if (!native.enabled && !native.switchedOff)
    process.stderr.write(`looplm: portable kernels (native ones unavailable: ${native.reason})\n`);
}

/** Install the hook on the program: it runs for whichever subcommand's action is about to run. */
export function setUpComputeBeforeActions(program: Command): void {
  program.hook("preAction", (_program, actionCommand) => setUp(actionCommand));
}
