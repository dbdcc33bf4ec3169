/*
 * `looplm export-hf --model <dir> --out <dir>`: a plain (non-looped) Mamba-2 checkpoint as a
 * Hugging Face Mamba2ForCausalLM folder (docs/formats.md, "Hugging Face Mamba-2 folders"). The
 * written folder is read back before the command reports success: the same config and the same
 * weights, bit for bit, or it fails naming what differs.
 */
import { readdirSync } from "node:fs";
import { type ModelConfig, stateDict, toHfMamba2Config } from "@loop/looped";
import { loadCheckpoint, saveHfCheckpoint } from "@loop/looped/node";
import { outputKind } from "@loop/tensor/node";
import type { Command } from "commander";
import { asCliError, CliError } from "../errors.js";
import { checkModelRun } from "../memory-need.js";
import { cliNote } from "../note.js";

/** The command's options. */
export interface ExportHfArgs {
  model: string;
  out: string;
}

/** Export `args.model` to `args.out` and check the folder reads back the same; returns the notes. */
export function runExportHf(args: ExportHfArgs): string[] {
  const kind = asCliError(() => outputKind(args.out));
  if (kind !== "missing") {
    if (kind !== "folder") throw new CliError(`--out ${args.out} is a ${kind}, not a folder`);
    if (readdirSync(args.out).length > 0)
      throw new CliError(`--out ${args.out} is not empty: export into a new or empty folder`);
  }
  const notes: string[] = [];
  // (before the model is built: only a plain Mamba-2 model has a Hugging Face folder, and it
  // must fit — an edited n_loops is refused here, not grown into)
  const checkConfig = (cfg: ModelConfig) => {
    toHfMamba2Config(cfg);
    checkModelRun(cfg, { command: "export-hf" });
  };
  const model = asCliError(() =>
    loadCheckpoint(args.model, { onNote: (l) => notes.push(l), checkConfig }),
  );
  asCliError(() => saveHfCheckpoint(args.out, model));
  const back = asCliError(() => loadCheckpoint(args.out, { onNote: () => {} }));
  if (JSON.stringify(back.config) !== JSON.stringify(model.config))
    throw new CliError(
      `${args.out} reads back as a different config: ${JSON.stringify(back.config)}`,
    );
  const want = stateDict(model);
  for (const [name, t] of stateDict(back)) {
    const w = want.get(name)!.data;
    if (t.data.some((v, i) => !Object.is(v, w[i])))
      throw new CliError(`${args.out}: ${name} reads back with different values`);
  }
  return notes;
}

/** Register `export-hf`. */
export function registerExportHf(program: Command): void {
  program
    .command("export-hf")
    .description(
      "Write a plain Mamba-2 checkpoint (one loop, no loop norm, no exit gate) as a Hugging Face Mamba2ForCausalLM folder (config.json + model.safetensors)",
    )
    .requiredOption("--model <dir>", "checkpoint folder (config.json + model.safetensors)")
    .requiredOption("--out <dir>", "the Hugging Face folder to write (new or empty)")
    .addHelpText(
      "after",
      "\nThe folder is read back before the command ends: same config, same weights bit for bit.\nExample:\n  looplm export-hf --model testdata/golden/mamba-1x1 --out mamba-1x1-hf",
    )
    .action((opts: ExportHfArgs) => {
      for (const line of runExportHf(opts)) cliNote(line);
      process.stderr.write(`wrote ${opts.out}/config.json and ${opts.out}/model.safetensors\n`);
    });
}
