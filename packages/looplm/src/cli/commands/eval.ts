import { basename, join } from "node:path";
import {
  DEFAULT_Q_SWEEP,
  EVAL_FORMAT,
  type EvalFile,
  evaluateMultipleChoice,
  formatEvalSummary,
  type HopsSection,
  type McItem,
  mcSection,
  metricSection,
  modelLoglikelihoods,
} from "@loop/eval";
import { readMcFile, readPiqaFiles, writeEvalFile } from "@loop/eval/node";
import type { ExitRule } from "@loop/exit-gate";
import { countParameters, flopsPerToken, type LoopedModel, type ModelConfig } from "@loop/looped";
import { loadCheckpoint } from "@loop/looped/node";
import {
  type Batch,
  checkTaskVocab,
  ManoTask,
  PHopTask,
  type Task,
  taskEvalBatches,
} from "@loop/tasks";
import type { Precision } from "@loop/tensor";
import { inputFileExists, readJsonFile } from "@loop/tensor/node";
import type { Command } from "commander";
import { type ComputeBackend, checkPrecision, hostBackendsFlag } from "../../backend.js";
import { evaluateOnBackend } from "../../device-eval.js";
import { commandBackend, needsKernels } from "../compute.js";
import { asCliError, CliError, checkOutput, floatOption, intFlag } from "../errors.js";
import { withEvalProgress } from "../eval-progress.js";
import { locateModel } from "../locate-model.js";
import { checkMemoryNeed, evaluationMemoryNeed } from "../memory-need.js";
import { cliNote } from "../note.js";
import { checkExitRules, EXIT_SYNTAX, exitRulesOption } from "../options/exit.js";
import { precisionOption } from "../options/precision.js";
import {
  addTaskOptions,
  buildTask,
  TASK_DEFAULTS,
  type TaskFlags,
  taskInfo,
  taskName,
} from "../options/task.js";
import {
  checkRecordedTask,
  checkRecordedTokenizer,
  type FoundRecord,
  findTaskRecord,
  noRecordLine,
  recordedTokenizerPath,
} from "../task-record.js";
import { checkPerLengthFlags, evalPerLength, type PerLengthFile } from "./eval-per-length.js";

export interface EvalFlags extends Partial<TaskFlags> {
  model: string;
  count: number;
  batchSize: number;
  seed?: number;
  q?: number;
  qSweep?: number[] | true;
  exit?: ExitRule[];
  mc?: string;
  piqa?: string;
  labels?: string;
  mcLimit?: number;
  perLength?: boolean;
  out?: string;
  /** The matrix products' precision (absent: fp32); the backend refuses one it does not offer. */
  precision?: Precision;
}

function threshold(flag: string): (v: string) => number {
  const num = floatOption(flag);
  return (v) => {
    const q = num(v);
    if (q < 0 || q > 1) throw new CliError(`${flag} must be in [0, 1], got ${q}`);
    return q;
  };
}

function thresholdList(v: string): number[] {
  const parse = threshold("--q-sweep");
  const qs = v.split(",").map((s) => parse(s.trim()));
  if (qs.length === 0) throw new CliError(`--q-sweep needs at least one threshold, got "${v}"`);
  return qs;
}

const FLAG_OF_INFO: Record<string, keyof TaskFlags> = {
  max_ops: "maxOps",
  alphabet: "alphabet",
  length: "length",
  hops: "hops",
  mixed_hops: "mixedHops",
  corpus: "corpus",
  tokenizer: "tokenizer",
  vocab: "vocab",
  seq_len: "seqLen",
};

/**
 * Task flags: defaults < the model's task record (task.json), or without one the run's run.json
 * task < flags given on the command line; for lm, the recorded tokenizer (else the
 * tokenizer.json saved beside the checkpoint) unless --tokenizer is given. A --task other than
 * the recorded one is refused.
 */
export function resolveTaskFlags(
  f: EvalFlags,
  cmd: Command | null,
  checkpoint: string,
  runDir: string | null,
  found: FoundRecord | null = null,
): TaskFlags {
  const out: Record<string, unknown> = { ...TASK_DEFAULTS };
  if (found) {
    const t = found.record.task;
    // (a record and its run's run.json that disagree on the task: one of them was edited, and
    // scoring by the record would score the model on a task it never trained on)
    const runJson = runDir ? join(runDir, "run.json") : null;
    const ran = runJson
      ? asCliError(() => readJsonFile<{ task?: { name?: unknown } }>(runJson)).task?.name
      : undefined;
    if (typeof ran === "string" && ran !== t.name)
      throw new CliError(
        `${found.path} records task ${t.name}, but ${runJson} records ${ran}: one of them was edited; restore it (or remove ${found.path})`,
      );
    out.task = t.name;
    for (const [k, flag] of Object.entries(FLAG_OF_INFO)) if (t[k] !== undefined) out[flag] = t[k];
  } else if (runDir) {
    const info = asCliError(() =>
      readJsonFile<{ task?: Record<string, unknown> }>(join(runDir, "run.json")),
    );
    const t = info.task ?? {};
    if (typeof t.name === "string") out.task = t.name;
    for (const [k, flag] of Object.entries(FLAG_OF_INFO)) if (t[k] !== undefined) out[flag] = t[k];
  }
  const fromCli = (k: string) =>
    cmd ? cmd.getOptionValueSource(k) === "cli" : (f as never)[k] !== undefined;
  for (const k of ["task", ...Object.values(FLAG_OF_INFO)])
    if (fromCli(k) && (f as unknown as Record<string, unknown>)[k] !== undefined)
      out[k] = (f as unknown as Record<string, unknown>)[k];
  if (out.task === undefined)
    throw new CliError("--task is required (no run.json next to --model to take it from)");
  if (found) checkRecordedTask(found, String(out.task));
  // A language-model run keeps its tokenizer.json beside the weights: evaluate with that one.
  const recorded = found ? recordedTokenizerPath(found) : null;
  if (out.task === "lm" && !fromCli("tokenizer") && recorded) out.tokenizer = recorded;
  else if (out.task === "lm" && !fromCli("tokenizer")) {
    const saved = [checkpoint, runDir]
      .filter((d): d is string => d !== null)
      .map((d) => join(d, "tokenizer.json"))
      .find((p) => asCliError(() => inputFileExists(p)));
    if (saved) out.tokenizer = saved;
  }
  out.task = taskName(String(out.task));
  return out as unknown as TaskFlags;
}

function mcItems(f: EvalFlags): { items: McItem[]; source: string } | null {
  if (f.mc && f.piqa) throw new CliError("--mc and --piqa cannot be used together");
  if (f.labels && !f.piqa) throw new CliError("--labels goes with --piqa <file.jsonl>");
  if (f.mcLimit !== undefined && !f.mc && !f.piqa)
    throw new CliError("--mc-limit needs --mc or --piqa");
  const { mc, piqa, labels } = f;
  if (!mc && !piqa) return null;
  if (piqa && !labels)
    throw new CliError("--piqa needs --labels <file.lst> (one label 0/1 a line)");
  const items = asCliError(() => (piqa ? readPiqaFiles(piqa, labels!) : readMcFile(mc!)));
  const source = piqa ? "piqa" : basename(mc!).replace(/\.jsonl$/, "");
  return { items: f.mcLimit ? items.slice(0, f.mcLimit) : items, source };
}

function thresholds(f: EvalFlags, model: LoopedModel): number[] {
  if (f.q !== undefined && f.qSweep !== undefined)
    throw new CliError("--q and --q-sweep cannot be used together");
  const qs =
    f.q !== undefined ? [f.q] : f.qSweep === true ? [...DEFAULT_Q_SWEEP] : (f.qSweep ?? []);
  if (qs.length > 0 && !model.exitGate)
    throw new CliError(
      `--q/--q-sweep need a model with an exit gate; ${f.model} has "exit_gate": false`,
    );
  return qs;
}

export async function runEval(
  f: EvalFlags,
  backend: ComputeBackend,
  cmd: Command | null = null,
): Promise<EvalFile | PerLengthFile> {
  checkPrecision(backend, f.precision ?? "fp32");
  const { checkpoint, runDir } = locateModel(f.model);
  const out =
    f.out ?? (runDir ? join(runDir, f.perLength ? "eval-per-length.json" : "eval.json") : null);
  if (out) checkOutput(out);
  const found = findTaskRecord(checkpoint, runDir);
  if (!found) process.stderr.write(noRecordLine(checkpoint));
  const taskFlags = resolveTaskFlags(f, cmd, checkpoint, runDir, found);
  if (f.perLength) checkPerLengthFlags(f, taskFlags.task, backend);
  const mc = mcItems(f);
  if (mc && taskFlags.task !== "lm")
    throw new CliError(
      `--mc/--piqa score text with the lm task's tokenizer; use --task lm (got ${taskFlags.task})`,
    );
  const task: Task = await buildTask(taskFlags);
  // Before the model is built: its vocabulary against the task's, and one evaluation batch (its
  // rows are made batch by batch as they are read) against the machine's memory.
  const checkConfig = (cfg: ModelConfig) => {
    asCliError(() => checkTaskVocab(task, cfg.vocab_size));
    if (!f.perLength)
      checkMemoryNeed(
        evaluationMemoryNeed(cfg, task.seqLen, { count: f.count, batchSize: f.batchSize }),
        undefined,
        { count: "--count", evalBatch: "--batch-size" },
      );
  };
  const model = asCliError(() => loadCheckpoint(checkpoint, { onNote: cliNote, checkConfig }));
  const qs = thresholds(f, model);
  const exits = f.exit ?? [];
  checkExitRules(
    exits,
    { R: model.config.n_loops, hasGate: model.exitGate !== null, path: f.model },
    true,
  );
  if (exits.length > 0 && f.perLength)
    throw new CliError("--exit and --per-length cannot be used together");
  if (found && task.tokenizer)
    checkRecordedTokenizer(
      found,
      task.tokenizer,
      f.tokenizer !== undefined && cmd?.getOptionValueSource("tokenizer") === "cli"
        ? `--tokenizer ${f.tokenizer}`
        : taskFlags.tokenizer,
    );
  const cfg = model.config;
  if (f.perLength && task instanceof ManoTask)
    return evalPerLength({
      model,
      checkpoint,
      task,
      taskInfo: taskInfo(taskFlags),
      count: f.count,
      seed: f.seed,
      batchSize: f.batchSize,
      kernels: backend.kernels,
      out,
    });
  const batches = withEvalProgress(
    taskEvalBatches(task, { count: f.count, batchSize: f.batchSize, seed: f.seed }),
    "eval",
  );
  if (backend.caps.memory !== "host" && mc)
    throw new CliError(
      `--mc/--piqa are scored in host memory only (--backend ${backend.name} keeps the model on its device); use ${hostBackendsFlag()}`,
    );
  const evaluate = (bs: Iterable<Batch>) =>
    evaluateOnBackend(backend, model, bs, task.metric, {
      qs,
      exits,
      score: (b, p) => task.score(b, p),
      precision: f.precision,
    });
  const result = await evaluate(batches);
  // a mixed-difficulty p-hop task: the same evaluation on the rows of each p apart
  const byHops: HopsSection[] = [];
  if (task instanceof PHopTask && task.mixedHops)
    for (let p = 1; p <= task.hops; p++) {
      const part = task.evalSetOfHops({ count: f.count, batchSize: f.batchSize, seed: f.seed }, p);
      if (part.length === 0) continue;
      const m = metricSection(await evaluate(part));
      byHops.push({
        hops: p,
        count: m.count,
        per_step: m.per_step,
        gated: m.gated,
        ...(m.exits ? { exits: m.exits } : {}),
      });
    }
  let mcPart: EvalFile["mc"] = null;
  if (mc) {
    const tok = task.tokenizer;
    if (!tok) throw new CliError("--mc/--piqa need --task lm");
    const r = evaluateMultipleChoice(mc.items, tok, (reqs) =>
      modelLoglikelihoods(model, reqs, { batchSize: f.batchSize, kernels: backend.kernels }),
    );
    mcPart = mcSection(r, mc.source);
  }
  const ev: EvalFile = {
    format: EVAL_FORMAT,
    model: {
      dir: checkpoint,
      label: `${cfg.n_layers}⊗${cfg.n_loops}`,
      params: countParameters(model),
      // the evaluation's forward: it scores every loop step, so it computes R LM heads
      flops_per_token: flopsPerToken(cfg, { seqLen: task.seqLen, logitSteps: cfg.n_loops })
        .forwardPerToken,
      config: { ...cfg },
    },
    task: {
      ...taskInfo(taskFlags),
      name: taskFlags.task,
      eval_count: f.count,
      eval_seed: f.seed ?? null,
    },
    ...metricSection(result),
    q: f.q ?? null,
    mc: mcPart,
    ...(byHops.length > 0 ? { by_hops: byHops } : {}),
  };
  if (out) writeEvalFile(out, ev);
  process.stdout.write(formatEvalSummary(ev));
  if (out) process.stdout.write(`wrote ${out}\n`);
  return ev;
}

export function registerEval(program: Command): void {
  const cmd = needsKernels(program.command("eval"))
    .description(
      "Evaluate a checkpoint at every loop step: accuracy (mano, phop) or perplexity (lm), exit-gate thresholds, multiple choice",
    )
    .requiredOption(
      "--model <dir>",
      "checkpoint folder (config.json + model.safetensors) or a run folder",
    );
  addTaskOptions(cmd, false);
  cmd
    .addOption(intFlag("--count <n>", "evaluation rows (examples, or windows for lm)", 1, 256))
    .addOption(intFlag("--batch-size <n>", "rows (or MC requests) per forward pass", 1, 32))
    .addOption(intFlag("--seed <n>", "evaluation-set seed (default: the task's fixed seed)", 0))
    .option("--q <q>", "exit threshold in [0, 1] for gated models", threshold("--q"))
    .option(
      "--q-sweep [list]",
      "exit thresholds, comma-separated (default 0,0.1,…,1)",
      thresholdList,
    )
    .option(
      "--exit <rules>",
      `exit rules, comma-separated (${EXIT_SYNTAX}; docs/exit-gate.md): the metric and mean exit step under each (oracle: eval only, not realisable)`,
      exitRulesOption(),
    )
    .option(
      "--mc <file.jsonl>",
      'multiple choice: {"context", "choices": [..], "label"} per line (lm only)',
    )
    .option(
      "--piqa <file.jsonl>",
      "PIQA items {goal, sol1, sol2} per line (lm only; with --labels)",
    )
    .option("--labels <file.lst>", "PIQA labels, one 0/1 a line")
    .addOption(intFlag("--mc-limit <n>", "score only the first n MC items", 1))
    .option(
      "--per-length",
      "mano only: accuracy at every expression length ℓ = 1..L on --count fresh expressions per ℓ (their own stream, mano/eval-len; --seed draws another) instead of the fixed set at ℓ = L; writes <run>/eval-per-length.json",
    )
    .option(
      "--out <file>",
      "eval.json to write (default: <run>/eval.json when --model is in a run folder; eval-per-length.json with --per-length)",
    )
    .addOption(precisionOption())
    .addHelpText(
      "after",
      `
Task settings (--task, --max-ops, --corpus, …) default to the run.json beside the checkpoint.

Examples:
  looplm eval --model runs/mano-4x6/final
  looplm eval --model runs/phop-1x4 --task phop --length 32 --hops 4 --count 1000
  looplm eval --model runs/mano-4x6-g2/final --q 0.5
  looplm eval --model runs/mano-4x6 --per-length --count 1024
  looplm eval --model runs/mano-4x6-g2/final --q-sweep 0.1,0.3,0.5,0.7,0.9 --out sweep-eval.json
  looplm eval --model runs/mano-4x6-g2/final --exit gate:0.5,entropy:0.3,state-change:0.05,agree:1,oracle
  looplm eval --model runs/lm-char/final --task lm --corpus testdata/data/wikitext2-valid.txt
  looplm eval --model runs/lm-char/final --piqa testdata/data/piqa-valid.jsonl --labels testdata/data/piqa-valid-labels.lst`,
    )
    .action(async (opts: EvalFlags, c: Command) => {
      await runEval(opts, commandBackend(c), c);
    });
}
