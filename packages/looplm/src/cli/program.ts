/*
 * The `looplm` command line: one commander program, one file per command under commands/, each
 * registering itself here. Errors from bad input surface as `CliError` (or any Error) and are
 * printed as one line; commander's own parse errors are rewritten to that line (one-voice.ts).
 */
import type { Command } from "commander";
import pkg from "../../package.json" with { type: "json" };
import { registerCheck } from "./commands/check.js";
import { registerEval } from "./commands/eval.js";
import { registerExperiment } from "./commands/experiment.js";
import { registerExportHf } from "./commands/export-hf.js";
import { registerForward } from "./commands/forward.js";
import { registerGenerate } from "./commands/generate.js";
import { registerReport } from "./commands/report.js";
import { registerReproduce } from "./commands/reproduce.js";
import { registerSample } from "./commands/sample.js";
import { registerSweep } from "./commands/sweep.js";
import { registerTokenizer } from "./commands/tokenizer.js";
import { registerTrain } from "./commands/train.js";
import { registerWorker } from "./commands/worker.js";
import { helpSettings, LooplmCommand } from "./one-voice.js";
import { refuseEmptyPathsBeforeActions } from "./path-options.js";

/**
 * The `looplm` command line as a commander `Command` with every subcommand registered (what the bin
 * runs; tests drive it in-process).
 */
export function buildProgram(): Command {
  const program = new LooplmCommand("looplm")
    .description(
      "Looped language models (N⊗R Mamba-2, hybrid and Transformer backbones) with exit gates",
    )
    .version(pkg.version, "-v, --version")
    .configureHelp(helpSettings)
    .exitOverride();
  registerCheck(program);
  registerExperiment(program);
  registerForward(program);
  registerExportHf(program);
  registerGenerate(program);
  registerTrain(program);
  registerSweep(program);
  registerSample(program);
  registerTokenizer(program);
  registerEval(program);
  registerReport(program);
  registerReproduce(program);
  registerWorker(program);
  refuseEmptyPathsBeforeActions(program);
  return program;
}
