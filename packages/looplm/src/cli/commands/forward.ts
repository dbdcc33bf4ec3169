/* `looplm forward --model <dir> --input <inputs.json> --out <file.safetensors>` (docs/formats.md). */
import type { ModelConfig } from "@loop/looped";
import { loadCheckpoint } from "@loop/looped/node";
import type { Precision } from "@loop/tensor";
import { readInputText, writeSafetensorsFile } from "@loop/tensor/node";
import type { Command } from "commander";
import type { ComputeBackend } from "../../backend.js";
import { parseForwardInputs } from "../../forward/inputs.js";
import { forwardOutputs } from "../../forward/outputs.js";
import { commandBackend, needsKernels } from "../compute.js";
import { asCliError, CliError, checkOutput } from "../errors.js";
import { checkModelRun } from "../memory-need.js";
import { cliNote } from "../note.js";
import { precisionOption } from "../options/precision.js";

export interface ForwardArgs {
  model: string;
  input: string;
  out: string;
  /** The matrix products' precision (absent: fp32); the backend refuses one it does not offer. */
  precision?: Precision;
}

/** Writes the outputs on `backend` (on its device when it has one); resolves to their count. */
export async function runForward(args: ForwardArgs, backend: ComputeBackend): Promise<number> {
  const ops = backend.opsAt(args.precision ?? "fp32");
  checkOutput(args.out);
  // The inputs are read first (their errors said after the model's): their token count enters
  // the memory the forward needs, checked before the model is built.
  let raw: unknown;
  let inputError: CliError | null = null;
  try {
    // (by the one input rule: only a regular file, never opened blocking)
    const text = readInputText(args.input);
    try {
      raw = JSON.parse(text);
    } catch (e) {
      inputError = new CliError(`--input ${args.input} is not valid JSON: ${(e as Error).message}`);
    }
  } catch (e) {
    inputError = new CliError(`--input: ${(e as Error).message}`);
  }
  const rows = (raw as { tokens?: unknown } | undefined)?.tokens;
  const tokens = Array.isArray(rows) ? Math.max(1, rows.flat().length) : 1;
  const checkConfig = (cfg: ModelConfig) =>
    checkModelRun(cfg, { command: "forward", forwardTokens: tokens });
  const model = asCliError(() => loadCheckpoint(args.model, { onNote: cliNote, checkConfig }));
  if (inputError) throw inputError;
  const inputs = parseForwardInputs(raw, model.config.vocab_size);
  const outputs = await forwardOutputs(ops, model, inputs);
  writeSafetensorsFile(args.out, outputs);
  return outputs.size;
}

export function registerForward(program: Command): void {
  needsKernels(program.command("forward"), { threads: false })
    .description(
      "Compute every golden-file tensor (logits per step, losses, gradients, gate outputs) for a model and inputs, on the chosen backend",
    )
    .requiredOption("--model <dir>", "checkpoint folder (config.json + model.safetensors)")
    .requiredOption("--input <file>", "inputs.json: tokens, targets, beta, k, gamma, q")
    .requiredOption("--out <file>", "output .safetensors file (written atomically)")
    .addOption(precisionOption())
    .addHelpText(
      "after",
      "\nExample (from a checkout of the repository, whose testdata/golden holds the reference cases):\n  looplm forward --model testdata/golden/mamba-2x3 --input testdata/golden/mamba-2x3/inputs.json --out out.safetensors\n  looplm forward --backend portable --model testdata/golden/mamba-2x3 --input testdata/golden/mamba-2x3/inputs.json --out out.safetensors",
    )
    .action(async (opts: ForwardArgs, cmd: Command) => {
      const n = await runForward(opts, commandBackend(cmd));
      process.stderr.write(`wrote ${n} tensors to ${opts.out}\n`);
    });
}
