/*
 * From a corpus to a tokenizer and a language-modelling task: read the corpus, split it, get a
 * tokenizer (train BPE or build a character vocabulary on the training split only, or load a
 * `tokenizer.json`), encode both splits.
 */
import { trainBpe } from "../lm/bpe-trainer.js";
import { buildCharTokenizer } from "../lm/char-tokenizer.js";
import { type CorpusSplit, splitCorpus } from "../lm/corpus.js";
import { encodeDocuments, LanguageModelTask } from "../lm/lm-task.js";
import type { TextTokenizer } from "../lm/tokenizer.js";
import { readCorpus, SOTU } from "./corpus-files.js";
import { readTokenizerFile } from "./tokenizer-file.js";

/** Which corpus a text task reads and how it is split. */
export interface CorpusOptions {
  /** "sotu" (default), a text file or a folder of text files. */
  corpus?: string;
  /** Validation share (default 0.05), see `splitCorpus`. */
  validationFraction?: number;
  splitSeed?: number;
}

/**
 * Which tokenizer a text task uses: BPE trained on the corpus, characters, or a `tokenizer.json`
 * file.
 */
export interface TokenizerOptions {
  /** "bpe" (default, trained here), "char", or a path to a `tokenizer.json`. */
  tokenizer?: string;
  /** BPE vocabulary size when training (default 4096). */
  vocabSize?: number;
}

/** Read and split a corpus. */
export async function loadCorpusSplit(options: CorpusOptions = {}): Promise<CorpusSplit> {
  const docs = await readCorpus(options.corpus ?? SOTU);
  return splitCorpus(docs, {
    validationFraction: options.validationFraction,
    seed: options.splitSeed,
  });
}

/** Train (bpe), build (char) on `split.train`, or load (a path) the tokenizer. */
export async function corpusTokenizer(
  split: CorpusSplit,
  options: TokenizerOptions = {},
): Promise<TextTokenizer> {
  const kind = options.tokenizer ?? "bpe";
  const texts = split.train.map((d) => d.text);
  if (kind === "bpe") return trainBpe(texts, { vocabSize: options.vocabSize ?? 4096 });
  if (kind === "char") return buildCharTokenizer(texts);
  return readTokenizerFile(kind);
}

/** Options of `loadTextTask`: corpus, tokenizer and window length. */
export interface TextTaskOptions extends CorpusOptions, TokenizerOptions {
  seqLen: number;
}

/**
 * A language-modelling task from a corpus on disk (or SOTU) and a tokenizer (trained, or read from
 * a file).
 */
export async function loadTextTask(options: TextTaskOptions): Promise<LanguageModelTask> {
  const split = await loadCorpusSplit(options);
  const tokenizer = await corpusTokenizer(split, options);
  const corpus = options.corpus ?? SOTU;
  return new LanguageModelTask({
    tokenizer,
    train: encodeDocuments(tokenizer, split.train),
    validation: encodeDocuments(tokenizer, split.validation),
    seqLen: options.seqLen,
    name: `lm-${corpus === SOTU ? SOTU : "text"}-${tokenizer.kind}${tokenizer.vocabSize}`,
  });
}
