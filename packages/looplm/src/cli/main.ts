#!/usr/bin/env node
/** Entry point of the `looplm` binary: run the program, print failures as one line. */
import { errnoCode, fsErrorMessage } from "@loop/tensor/node";
import { CommanderError } from "commander";
import { setUpComputeBeforeActions } from "./compute.js";
import { CliError } from "./errors.js";
import { interruptibleWorkRunning } from "./interrupt.js";
import { watchLauncher } from "./launcher-watch.js";
import { printable } from "./printable.js";
import { buildProgram } from "./program.js";
import { endQuietlyWhenStdoutCloses, stdoutFailed } from "./stdout.js";

/** One line for any failure; a raw Node file-system error becomes a sentence naming its path. */
function errorLine(e: unknown): string {
  const sys = e as NodeJS.ErrnoException;
  if (e instanceof Error && !(e instanceof CliError) && errnoCode(e) && sys.syscall)
    return fsErrorMessage(sys.syscall, sys.path ?? "a file", e);
  // (control characters escaped: a message may quote a queued job's label or a file's content)
  return printable((e instanceof Error ? e.message : String(e)).split("\n")[0]!);
}

async function main(argv: string[]): Promise<number> {
  endQuietlyWhenStdoutCloses(
    process.stdout,
    (code) => process.exit(code),
    interruptibleWorkRunning,
  );
  watchLauncher();
  // `pnpm looplm …` runs from the workspace root; resolve the user's relative paths from where
  // they typed the command.
  if (process.env.npm_lifecycle_event === "looplm" && process.env.INIT_CWD)
    process.chdir(process.env.INIT_CWD);
  // Threads and native kernels are set up before the chosen command's action (compute.ts); the
  // in-process tests build the program without this hook.
  const program = buildProgram();
  setUpComputeBeforeActions(program);
  try {
    await program.parseAsync(argv);
    return stdoutFailed() ? 1 : 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      // commander already printed help, the version, or its parse error as one `looplm: …` line
      // (one-voice.ts)
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
