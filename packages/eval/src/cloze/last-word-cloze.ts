/*
 * A last-word cloze built from held-out text, scored as multiple choice: for every sentence that
 * ends in a word (letters, then . ! or ?), the context is the text before that word (up to
 * `maxContextChars`, cut at a space) and the choices are the word and `choices − 1` distractors
 * drawn from the last words of the other sentences (so a distractor is as frequent a sentence end
 * as the answer is, on average: only the context tells them apart). The right choice's position is
 * drawn too. Chance is 1/choices. Deterministic for a seed; no file access (./node reads corpora).
 */
import { deriveSeed, Rng } from "@loop/tensor";
import type { McItem } from "../multiple-choice/mc-items.js";

/**
 * How `lastWordClozeItems` builds items: choices per item, seed, item limit and sentence length
 * bounds.
 */
export interface ClozeOptions {
  /** Choices per item, the answer included (default 4: chance 25 %). */
  choices?: number;
  /** Seed of the distractors and answer positions (default 0). */
  seed?: number;
  /** Keep the first `limit` items (default all). */
  limit?: number;
  /** Words a sentence needs before its last word to make an item (default 5). */
  minWords?: number;
  /** The longest context in characters (default 400; cut at a space). */
  maxContextChars?: number;
}

interface Blank {
  context: string;
  word: string;
}

const SENTENCE_END = /(?<=\s)([A-Za-z]{2,})[.!?](?=["')\]]?(\s|$))/g;

/** Sentences whose last word makes a cloze blank, in text order. */
function blanks(text: string, minWords: number, maxChars: number): Blank[] {
  const out: Blank[] = [];
  let sentenceStart = 0;
  for (const m of text.matchAll(SENTENCE_END)) {
    const at = m.index;
    const sentence = text.slice(sentenceStart, at);
    sentenceStart = at + m[0].length;
    if (sentence.split(/\s+/).filter((w) => /[A-Za-z]/.test(w)).length < minWords) continue;
    let from = Math.max(0, at - maxChars);
    if (from > 0) {
      const space = text.indexOf(" ", from);
      from = space < 0 || space >= at ? at : space + 1;
    }
    const context = text.slice(from, at).replace(/\s+$/u, "");
    if (context.length === 0) continue;
    out.push({ context, word: m[1]! });
  }
  return out;
}

/**
 * Multiple-choice items from running text: each sentence's last word is the answer, the last
 * words of other sentences the distractors (seeded).
 */
export function lastWordClozeItems(docs: readonly string[], opts: ClozeOptions = {}): McItem[] {
  const choices = opts.choices ?? 4;
  if (!(Number.isInteger(choices) && choices >= 2))
    throw new Error(`cloze: choices must be an integer ≥ 2, got ${choices}`);
  const all = docs.flatMap((d) => blanks(d, opts.minWords ?? 5, opts.maxContextChars ?? 400));
  const distinct = new Set(all.map((b) => b.word.toLowerCase()));
  if (distinct.size < choices)
    throw new Error(
      `cloze: the text has ${distinct.size} distinct sentence-final words, fewer than the ${choices} choices an item needs`,
    );
  const rng = new Rng(deriveSeed(opts.seed ?? 0, "cloze"));
  const kept = opts.limit === undefined ? all : all.slice(0, opts.limit);
  if (kept.length === 0) throw new Error("cloze: no sentence ends in a word in the text");
  return kept.map((b) => {
    const seen = new Set([b.word.toLowerCase()]);
    const options = [b.word];
    while (options.length < choices) {
      const w = all[rng.int(all.length)]!.word;
      if (seen.has(w.toLowerCase())) continue;
      seen.add(w.toLowerCase());
      options.push(w);
    }
    // the answer goes to a drawn position
    const label = rng.int(choices);
    [options[0], options[label]] = [options[label]!, options[0]!];
    return { context: b.context, choices: options, label };
  });
}
