/* `--model` of eval and generate: a checkpoint folder, or a run folder standing for its final/. */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { inputFileExists, inputFileStats, outputKind } from "@loop/tensor/node";
import { asCliError, CliError } from "./errors.js";

/** Where the checkpoint lies: `--model` may be a checkpoint folder or a run folder (uses final/). */
export function locateModel(model: string): { checkpoint: string; runDir: string | null } {
  const dir = resolve(model);
  if (!existsSync(dir)) {
    // (a dangling or looping link is named as one)
    asCliError(() => {
      try {
        inputFileStats(dir);
      } catch (e) {
        throw new Error(`--model: ${(e as Error).message}`);
      }
    });
    throw new CliError(`--model ${model} does not exist`);
  }
  const kind = asCliError(() => outputKind(dir));
  if (kind !== "folder")
    throw new CliError(`--model ${model} is a ${kind}, not a checkpoint or run folder`);
  // (by the one input rule: a FIFO, folder or dangling link under a file's name is named)
  const isFile = (p: string) => asCliError(() => inputFileExists(p));
  if (isFile(join(dir, "config.json"))) {
    const parent = dirname(dir);
    return { checkpoint: dir, runDir: isFile(join(parent, "run.json")) ? parent : null };
  }
  if (isFile(join(dir, "run.json")) && isFile(join(dir, "final", "config.json")))
    return { checkpoint: join(dir, "final"), runDir: dir };
  throw new CliError(
    `--model ${model} is neither a checkpoint folder (config.json) nor a run folder with final/`,
  );
}
