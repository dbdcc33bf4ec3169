#!/usr/bin/env node
/** Entry point of the `looplm` binary: run the program, print failures as one line. */
import { CommanderError } from "commander";
import { setUpComputeBeforeActions } from "./compute.js";
import { buildProgram } from "./program.js";

async function main(argv: string[]): Promise<number> {
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
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      // commander already printed its message (help, version, unknown option, ...)
      return e.exitCode;
    }
    const msg = e instanceof Error ? e.message : String(e);
    process.stderr.write(`looplm: ${msg.split("\n")[0]}\n`);
    if (process.env.LOOPLM_DEBUG && e instanceof Error && e.stack)
      process.stderr.write(`${e.stack}\n`);
    return 1;
  }
}

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`looplm: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
