/*
 * `looplm sample mano|phop …`: print training-distribution examples as JSONL on stdout, one
 * example per line — `{"input": [...], "answer": s, "ops": ℓ}` (Mano, ℓ uniform in 1..L) or
 * `{"input": [...], "answer": s, "hops": p}` (p-hop). Line i is training example i of `--seed`,
 * the same rows a training run with that seed sees.
 */
import { mano, pHop } from "@loop/tasks";
import type { Command } from "commander";
import { CliError, intFlag, intOption } from "../errors.js";
import { writeStdout } from "../stdout.js";

export interface SampleManoArgs {
  maxOps: number;
  count: number;
  seed: number;
}

export interface SamplePhopArgs {
  alphabet: number;
  length: number;
  hops: number;
  count: number;
  seed: number;
}

const MAX_SEED = 2 ** 32 - 1;

function seedOption(v: string): number {
  const n = intOption("--seed", 0)(v);
  if (n > MAX_SEED) throw new CliError(`--seed must be ≤ ${MAX_SEED}, got ${n}`);
  return n;
}

type Out = (s: string) => void | Promise<void>;

/** Write lines in chunks (one `write` per ~64 KiB) to `out`, waiting for it between chunks. */
async function emitLines(count: number, line: (i: number) => string, out: Out): Promise<void> {
  let buf = "";
  for (let i = 0; i < count; i++) {
    buf += `${line(i)}\n`;
    if (buf.length >= 65536) {
      await out(buf);
      buf = "";
    }
  }
  if (buf) await out(buf);
}

export async function runSampleMano(args: SampleManoArgs, out: Out): Promise<void> {
  const task = mano({ maxOps: args.maxOps });
  await emitLines(
    args.count,
    (i) => {
      const ex = task.trainExample(args.seed, i);
      return JSON.stringify({ input: ex.input, answer: ex.answer, ops: ex.ops });
    },
    out,
  );
}

export async function runSamplePhop(args: SamplePhopArgs, out: Out): Promise<void> {
  if (args.length < args.hops + 2)
    throw new CliError(
      `--length must be ≥ --hops + 2 = ${args.hops + 2} for a defined answer, got ${args.length}`,
    );
  const task = pHop({ alphabet: args.alphabet, length: args.length, hops: args.hops });
  await emitLines(
    args.count,
    (i) => {
      let ex: ReturnType<typeof task.trainExample>;
      try {
        ex = task.trainExample(args.seed, i);
      } catch (e) {
        // the configuration cannot produce examples: name the flags
        throw new CliError(
          `--hops ${args.hops} / --length ${args.length}: ${(e as Error).message}`,
        );
      }
      return JSON.stringify({ input: ex.input, answer: ex.answer, hops: ex.hops });
    },
    out,
  );
}

export function registerSample(program: Command): void {
  const sample = program
    .command("sample")
    .description("Print synthetic-task examples (training distribution) as JSONL on stdout")
    .addHelpText(
      "after",
      "\nExamples:\n  looplm sample mano --max-ops 10 --count 5 --seed 1\n  looplm sample phop --alphabet 4 --length 256 --hops 16 --count 5 --seed 1",
    );

  addSampler(
    sample,
    "mano",
    'Mano expressions mod 23, ℓ uniform in 1..L: {"input": ["<bos>", "<len_ℓ>", expr…, "<ans>"], "answer": s, "ops": ℓ}',
    (c) => c.addOption(intFlag("--max-ops <L>", "largest number of operators L (≥ 1)", 1, 10)),
    "looplm sample mano --max-ops 24 --count 1000 --seed 7 > mano.jsonl\n  looplm sample mano --max-ops 3 --count 2",
  ).action((opts: SampleManoArgs) => runSampleMano(opts, writeStdout));

  addSampler(
    sample,
    "phop",
    'p-hop induction sequences: {"input": [v_1…v_n], "answer": v_find_p(n), "hops": p}',
    (c) =>
      c
        .addOption(intFlag("--alphabet <A>", "alphabet size |Σ| (≥ 2)", 2, 4))
        .addOption(intFlag("--length <n>", "sequence length n (≥ hops + 2)", 1, 256))
        .addOption(intFlag("--hops <p>", "number of hops p (≥ 1)", 1, 16)),
    "looplm sample phop --alphabet 4 --length 256 --hops 32 --count 100 --seed 3 > phop.jsonl\n  looplm sample phop --length 12 --hops 2 --count 3",
  ).action((opts: SamplePhopArgs) => runSamplePhop(opts, writeStdout));
}

/**
 * A `sample` subcommand: its own options (added by `own`), then the --count and --seed every
 * sampler takes, and its examples.
 */
function addSampler(
  parent: Command,
  name: string,
  description: string,
  own: (c: Command) => Command,
  examples: string,
): Command {
  return own(parent.command(name).description(description))
    .addOption(intFlag("--count <n>", "number of examples (≥ 1)", 1, 10))
    .option("--seed <s>", "seed, an integer in [0, 2^32 − 1]", seedOption, 0)
    .addHelpText("after", `\nExamples:\n  ${examples}`);
}
