/**
 * One call from a corpus to a language-modelling task: read the corpus, split it, get a
 * tokenizer (train BPE or build a character vocabulary on the training split only, or load a
 * `tokenizer.json`), encode both splits.
 */
import { trainBpe } from "../lm/bpe-trainer.js";
import { buildCharTokenizer } from "../lm/char-tokenizer.js";
import { splitCorpus } from "../lm/corpus.js";
import { encodeDocuments, LanguageModelTask } from "../lm/lm-task.js";
import type { TextTokenizer } from "../lm/tokenizer.js";
import { readCorpus, SOTU } from "./corpus-files.js";
import { readTokenizerFile } from "./tokenizer-file.js";

export interface TextTaskOptions {
  /** "sotu" (default), a text file or a folder of text files. */
  corpus?: string;
  /** "bpe" (default, trained here), "char", or a path to a `tokenizer.json`. */
  tokenizer?: string;
  /** BPE vocabulary size when training (default 4096). */
  vocabSize?: number;
  seqLen: number;
  validationFraction?: number;
  splitSeed?: number;
}

export async function loadTextTask(options: TextTaskOptions): Promise<LanguageModelTask> {
  const corpus = options.corpus ?? SOTU;
  const docs = await readCorpus(corpus);
  const split = splitCorpus(docs, {
    validationFraction: options.validationFraction,
    seed: options.splitSeed,
  });
  const texts = split.train.map((d) => d.text);
  const kind = options.tokenizer ?? "bpe";
  let tokenizer: TextTokenizer;
  if (kind === "bpe") tokenizer = trainBpe(texts, { vocabSize: options.vocabSize ?? 4096 });
  else if (kind === "char") tokenizer = buildCharTokenizer(texts);
  else tokenizer = await readTokenizerFile(kind);
  return new LanguageModelTask({
    tokenizer,
    train: encodeDocuments(tokenizer, split.train),
    validation: encodeDocuments(tokenizer, split.validation),
    seqLen: options.seqLen,
    name: `lm-${corpus === SOTU ? SOTU : "text"}-${tokenizer.kind}${tokenizer.vocabSize}`,
  });
}
