#!/usr/bin/env node
/** Entry point of the `looplm` binary: run the program, print failures as one line. */
import { availableParallelism } from "node:os";
import { errnoCode, fsErrorMessage, startThreadPool } from "@loop/tensor/node";
import { CommanderError } from "commander";
import { enableNativeKernels } from "../native.js";
import { CliError } from "./errors.js";
import { buildProgram } from "./program.js";
import { endQuietlyWhenStdoutCloses } from "./stdout.js";

/** One line for any failure; a raw Node file-system error becomes a sentence naming its path. */
function errorLine(e: unknown): string {
  const sys = e as NodeJS.ErrnoException;
  if (e instanceof Error && !(e instanceof CliError) && errnoCode(e) && sys.syscall)
    return fsErrorMessage(sys.syscall, sys.path ?? "a file", e);
  return (e instanceof Error ? e.message : String(e)).split("\n")[0]!;
}

async function main(argv: string[]): Promise<number> {
  endQuietlyWhenStdoutCloses();
  // `pnpm looplm …` runs from the workspace root; resolve the user's relative paths from where
  // they typed the command.
  if (process.env.npm_lifecycle_event === "looplm" && process.env.INIT_CWD)
    process.chdir(process.env.INIT_CWD);
  // Training and evaluation split their large kernels over a worker-thread pool (one thread per
  // core, LOOPLM_THREADS=n to choose, 1 to switch it off); one-shot commands such as `forward`
  // stay single-threaded, where starting workers would cost more than it saves.
  const heavy = ["experiment", "train", "sweep", "eval"].includes(argv[2] ?? "");
  const threads = process.env.LOOPLM_THREADS
    ? Number(process.env.LOOPLM_THREADS)
    : heavy
      ? availableParallelism()
      : 1;
  if (!Number.isInteger(threads) || threads < 1)
    throw new Error(`LOOPLM_THREADS must be an integer ≥ 1, got "${process.env.LOOPLM_THREADS}"`);
  if (threads > 1) await startThreadPool(threads);
  // Heavy commands also switch on the native kernels (compiled from C on first use, then
  // cached); without a compiler they say so once and run on the portable kernels.
  if (heavy) {
    const native = await enableNativeKernels();
    if (!native.enabled && !native.switchedOff)
      process.stderr.write(
        `looplm: portable kernels (native ones unavailable: ${native.reason})\n`,
      );
  }
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      // commander already printed its message (help, version, unknown option, ...)
      return e.exitCode;
    }
    process.stderr.write(`looplm: ${errorLine(e)}\n`);
    if (process.env.LOOPLM_DEBUG && e instanceof Error && e.stack)
      process.stderr.write(`${e.stack}\n`);
    return e instanceof CliError ? e.exitCode : 1;
  }
}

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`looplm: ${errorLine(e)}\n`);
    process.exitCode = 1;
  },
);
