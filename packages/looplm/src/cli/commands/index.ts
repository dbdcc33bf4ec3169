/** Every command registers itself here (one import per command file). */
import type { Command } from "commander";
import { registerEval } from "./eval.js";
import { registerExperiment } from "./experiment.js";
import { registerForward } from "./forward.js";
import { registerGenerate } from "./generate.js";
import { registerReport } from "./report.js";
import { registerReproduce } from "./reproduce.js";
import { registerSample } from "./sample.js";
import { registerSweep } from "./sweep.js";
import { registerTokenizer } from "./tokenizer.js";
import { registerTrain } from "./train.js";
import { registerWorker } from "./worker.js";

export function registerCommands(program: Command): void {
  registerExperiment(program);
  registerForward(program);
  registerGenerate(program);
  registerTrain(program);
  registerSweep(program);
  registerSample(program);
  registerTokenizer(program);
  registerEval(program);
  registerReport(program);
  registerReproduce(program);
  registerWorker(program);
}
