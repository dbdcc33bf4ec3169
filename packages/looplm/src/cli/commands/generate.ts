/* `looplm generate`: sample a continuation from a trained model (recurrent decoding). */
import { dirname, join } from "node:path";
import { type ExitRule, formatExitRule } from "@loop/exit-gate";
import {
  decodeClock,
  type GenerateResult,
  generateOn,
  generateTokens,
  hasDecodeOps,
  type ModelConfig,
  type StepPolicy,
} from "@loop/looped";
import { loadCheckpoint } from "@loop/looped/node";
import { readTokenizerFile } from "@loop/tasks/node";
import type { Precision } from "@loop/tensor";
import { inputFileExists, readJsonFile } from "@loop/tensor/node";
import type { Command } from "commander";
import { type ComputeBackend, hostBackendsFlag } from "../../backend.js";
import { argumentText } from "../argument-text.js";
import { commandBackend, needsKernels } from "../compute.js";
import { asCliError, CliError, floatFlag, intFlag } from "../errors.js";
import { locateModel } from "../locate-model.js";
import { checkModelRun, isAllocationFailure } from "../memory-need.js";
import { cliNote } from "../note.js";
import { checkExitRules, EXIT_SYNTAX, exitRulesOption } from "../options/exit.js";
import { parseIntList } from "../options/model.js";
import { precisionOption } from "../options/precision.js";
import { writeStdout } from "../stdout.js";
import {
  checkRecordedTokenizer,
  findTaskRecord,
  noRecordLine,
  recordedTokenizerPath,
} from "../task-record.js";

interface Flags {
  model: string;
  prompt?: string;
  tokens?: string;
  tokenizer?: string;
  /** Print the prompt text before the generated text (default; --no-echo: only what was generated). */
  echo?: boolean;
  maxNew: number;
  temperature: number;
  topK: number;
  seed: number;
  exit?: ExitRule[];
  /** End with one JSON line of decode rates on stderr (decode-clock.ts). */
  timing?: boolean;
  /** The matrix products' precision (absent: fp32); the backend refuses one it does not offer. */
  precision?: Precision;
}

function findBeside(model: string, name: string): string | null {
  for (const p of [join(model, name), join(dirname(model), name)])
    if (asCliError(() => inputFileExists(p))) return p;
  return null;
}

export async function runGenerate(f: Flags, backend: ComputeBackend): Promise<void> {
  const ops = backend.opsAt(f.precision ?? "fp32");
  if ((f.prompt === undefined) === (f.tokens === undefined))
    throw new CliError("give exactly one of --prompt <text> or --tokens <ids>");
  if (f.prompt !== undefined) argumentText("--prompt", f.prompt);
  // (a run folder stands for its final/ checkpoint, as with eval)
  const { checkpoint, runDir } = locateModel(f.model);
  const ids = f.tokens !== undefined ? parseIntList("--tokens", f.tokens) : null;
  // (before the model is built: a config looping a billion times is refused, not grown into)
  const checkConfig = (cfg: ModelConfig) =>
    checkModelRun(cfg, {
      command: "generate",
      decodeCapacity: (ids ? ids.length : 1) + f.maxNew,
      flags: "--max-new",
    });
  const model = asCliError(() => loadCheckpoint(checkpoint, { onNote: cliNote, checkConfig }));
  const V = model.config.vocab_size;
  const rules = f.exit ?? [];
  if (rules.length > 1)
    throw new CliError(`--exit takes one rule for generate, got ${rules.length}`);
  const rule = rules[0];
  checkExitRules(
    rules,
    { R: model.config.n_loops, hasGate: model.exitGate !== null, path: f.model },
    false,
  );
  const policy: StepPolicy = rule ? { kind: "rule", rule } : { kind: "full" };
  const { decode: caps } = backend.caps;
  if (rule && !caps.policies.includes(policy.kind))
    throw new CliError(
      `--exit ${formatExitRule(rule)}: generate on --backend ${backend.name} ${caps.recurrent ? `decodes with the step policies ${caps.policies.join(", ")} only` : "runs every token through all loop steps"}; use ${hostBackendsFlag()}`,
    );
  const beside = (name: string) =>
    findBeside(checkpoint, name) ?? (runDir ? findBeside(join(runDir, "final"), name) : null);
  let prompt: number[];
  let decode: (ids: number[]) => string;
  // (--tokens: the ids' symbols joined by spaces; text: the tokenizer's spelling)
  let separator = "";
  if (f.tokens !== undefined) {
    prompt = ids!;
    const bad = prompt.find((t) => t < 0 || t >= V);
    if (bad !== undefined)
      throw new CliError(
        `--tokens: token ${bad} is not an id of the model's vocabulary (0..${V - 1}, vocab_size in ${join(checkpoint, "config.json")})`,
      );
    const vocabPath = beside("vocab.json");
    const symbols: string[] | null = vocabPath
      ? asCliError(() => readJsonFile<string[]>(vocabPath))
      : null;
    decode = (ids) => (symbols ? ids.map((i) => symbols[i] ?? `<${i}>`).join(" ") : ids.join(" "));
    separator = " ";
  } else {
    // the model's own tokenizer by default: the one its task record names, else the one beside
    const found = findTaskRecord(checkpoint, runDir);
    if (!found) process.stderr.write(noRecordLine(checkpoint));
    const recorded = found ? recordedTokenizerPath(found) : null;
    const tokPath = f.tokenizer ?? recorded ?? beside("tokenizer.json");
    if (!tokPath)
      throw new CliError(
        `--prompt needs a tokenizer: pass --tokenizer <tokenizer.json> (none found beside ${f.model})`,
      );
    const tok = await asCliError(() => readTokenizerFile(tokPath));
    if (found) checkRecordedTokenizer(found, tok, f.tokenizer ? `--tokenizer ${tokPath}` : tokPath);
    // A tokenizer with more tokens than the model has embeddings is not the one it learned
    // (that one is tokenizer.json beside its weights): its ids would index nothing.
    if (tok.vocabSize > V)
      throw new CliError(
        `${f.tokenizer ? `--tokenizer ${tokPath}` : tokPath} has ${tok.vocabSize} tokens but the model in ${checkpoint} has a vocabulary of ${V} (vocab_size in config.json): use the tokenizer.json the model was trained with`,
      );
    prompt = Array.from(tok.encode(f.prompt!));
    if (prompt.length === 0) throw new CliError("--prompt encodes to no tokens");
    decode = (ids) => {
      try {
        return tok.decode(ids);
      } catch (e) {
        // A tokenizer smaller than the model's vocabulary cannot spell every token it samples.
        const bad = ids.find((i) => i >= tok.vocabSize);
        if (bad === undefined) throw e;
        throw new CliError(
          `the model sampled token ${bad}, which ${f.tokenizer ? `--tokenizer ${tokPath}` : tokPath} (${tok.vocabSize} tokens) cannot decode: the model's vocabulary has ${V} (vocab_size in ${join(checkpoint, "config.json")}); use the tokenizer.json the model was trained with`,
        );
      }
    };
  }
  const opts = {
    maxNewTokens: f.maxNew,
    temperature: f.temperature,
    topK: f.topK,
    seed: f.seed,
    policy,
  };
  let done: GenerateResult | null = null;
  // Every token is printed as it comes (a long generation shows its text at once, and stops on
  // Ctrl-C or a closed pipe): `pending` holds ids that spell only part of a character yet.
  let pending: number[] = [];
  let first = true;
  // (a text prompt is echoed, so the output reads as one text; ids stay the generated ones only)
  if (f.prompt !== undefined && f.echo !== false) await writeStdout(f.prompt);
  const emit = async (id: number) => {
    pending.push(id);
    const text = decode(pending);
    if (text.endsWith("\uFFFD") && pending.length < 8) return;
    await writeStdout(`${first ? "" : separator}${text}`);
    first = false;
    pending = [];
  };
  const clock = decodeClock();
  const take = async (id: number) => {
    clock.arrived();
    await emit(id);
    clock.resume();
  };
  await asCliError(async () => {
    try {
      if (backend.caps.memory === "host") {
        const it = generateTokens(model, prompt, { ...opts, kernels: backend.kernels });
        let r = it.next();
        for (; !r.done; r = it.next()) await take(r.value);
        done = r.value;
      } else {
        if (!hasDecodeOps(ops))
          throw new CliError(
            `generate on --backend ${backend.name}: its ops have no decode kernels (mamba2Step, attendStep); use ${hostBackendsFlag()}`,
          );
        const it = generateOn(ops, model, prompt, opts);
        let r = await it.next();
        for (; !r.done; r = await it.next()) await take(r.value);
        done = r.value;
      }
    } catch (e) {
      if (isAllocationFailure(e))
        throw new CliError(
          `--max-new ${f.maxNew}: the decoding state for ${prompt.length + f.maxNew} positions does not fit in memory (attention layers keep every position); lower --max-new`,
        );
      throw e;
    }
  });
  await writeStdout(`${pending.length > 0 ? `${first ? "" : separator}${decode(pending)}` : ""}\n`);
  if (rule && done) {
    const d = done as GenerateResult;
    const mean = d.exitSteps.reduce((a, b) => a + b, 0) / Math.max(1, d.exitSteps.length);
    process.stderr.write(
      `--exit ${formatExitRule(rule)}: mean exit step ${mean.toFixed(2)} of ${model.config.n_loops} over ${d.exitSteps.length} tokens fed (${d.counts.layersRun} of ${d.counts.layersRun + d.counts.layersSkipped} layer applications run)\n`,
    );
  }
  if (f.timing) {
    const fed = (done as GenerateResult | null)?.exitSteps.slice(prompt.length) ?? [];
    const R = model.config.n_loops;
    process.stderr.write(
      `${JSON.stringify(clock.summary(prompt.length, fed.length ? fed : [R]))}\n`,
    );
  }
}

export function registerGenerate(program: Command): void {
  needsKernels(program.command("generate"), { threads: false })
    .description(
      "Generate tokens from a trained model with recurrent (per loop step, per layer) state kept where the backend computes (the CPU's memory or the GPU's); on the CPU the prompt is taken in one chunked pass, on a device token by token",
    )
    .requiredOption("--model <dir>", "checkpoint folder (e.g. <run>/final) or a run folder")
    .option(
      "--prompt <text>",
      "prompt text (language models; needs tokenizer.json beside the model or --tokenizer)",
    )
    .option("--tokens <ids>", "prompt as comma-separated token ids")
    .option("--tokenizer <file>", "tokenizer.json to encode/decode text")
    .option("--no-echo", "print only the generated text, not the --prompt before it")
    .addOption(intFlag("--max-new <n>", "tokens to generate", 0, 64))
    // (the library's generate defaults to temperature 1 too: one default in both places)
    .addOption(floatFlag("--temperature <t>", "sampling temperature (0 = greedy)", 1))
    .addOption(intFlag("--top-k <k>", "sample among the k most likely tokens (0 = all)", 0, 40))
    .addOption(intFlag("--seed <n>", "sampling seed", 0, 0))
    .option(
      "--exit <rule>",
      `early-exit decoding: each token stops at the loop step this rule picks (${EXIT_SYNTAX.replace(" | oracle", "")}; docs/exit-gate.md); the later steps are skipped`,
      exitRulesOption(),
    )
    .addOption(precisionOption())
    .option(
      "--timing",
      'end with one JSON line on stderr: {"prefill_tok_s", "decode_tok_s", "first64_tok_s", "last64_tok_s", "mean_exit_step"} (the decode rates of the first and the last 64 generated tokens)',
    )
    .addHelpText(
      "after",
      `
Examples:
  looplm generate --model runs/lm-char/final --prompt "Fellow citizens" --max-new 80   # runs/lm-char: docs/cli.md's recipe
  looplm generate --model runs/phop-1x4/final --tokens 0,1,2,3 --max-new 1 --temperature 0   # runs/phop-1x4: looplm train's first example
  looplm generate --model runs/mano-4x6-g2/final --tokens 0,1,2,3 --max-new 4 --exit entropy:0.3`,
    )
    .action((f: Flags, cmd: Command) => runGenerate(f, commandBackend(cmd)));
}
