/*
 * Byte-level BPE training (Sennrich et al. 2016 on GPT-2's byte alphabet, as the Hugging Face
 * `BpeTrainer` does): count pre-tokens first, then merge on the distinct words weighted by
 * their counts. Each step takes the most frequent adjacent pair (ties: smallest ids), adds the
 * merged token, and updates the pair counts of only the words that contain the pair (a
 * per-pair index of words plus a lazily-corrected max-heap), so a merge costs time in the
 * number of affected words rather than in the corpus size.
 *
 * Vocabulary ids: the special tokens first, then the 256 byte tokens in byte order, then one
 * token per merge in merge order. Training stops at `vocabSize` or when the best pair occurs
 * fewer than `minFrequency` times (so a small corpus can give a smaller vocabulary).
 */

import { ByteLevelBpeTokenizer, mergePair } from "./bpe-tokenizer.js";
import { BYTE_TO_CHAR, utf8 } from "./byte-level.js";
import { PairHeap } from "./pair-heap.js";
import { forEachPreToken } from "./pretokenize.js";
import { END_OF_TEXT, splitSpecials } from "./tokenizer.js";

const PAIR = 2 ** 21;

/**
 * Options of BPE training: the vocabulary size wanted, the smallest pair count to merge and the
 * special tokens.
 */
export interface BpeTrainOptions {
  /** Total vocabulary size wanted (specials + 256 bytes + merges), e.g. 4096. */
  vocabSize: number;
  /** Smallest pair count worth a merge (default 2). */
  minFrequency?: number;
  /** Special tokens, never split or merged (default `["<|endoftext|>"]`). */
  specialTokens?: readonly string[];
}

/** Count the GPT-2 pre-tokens of `texts` (special-token strings are left out). */
export function countPreTokens(
  texts: Iterable<string>,
  specialTokens: readonly string[] = [END_OF_TEXT],
  counts: Map<string, number> = new Map(),
): Map<string, number> {
  const specials = new Map(specialTokens.map((s, i) => [s, i] as const));
  for (const text of texts)
    splitSpecials(text, specials, (part, special) => {
      if (special === null)
        forEachPreToken(part, (w) => {
          counts.set(w, (counts.get(w) ?? 0) + 1);
        });
    });
  return counts;
}

/** Train on pre-token counts (from `countPreTokens`). */
export function trainBpeFromCounts(
  counts: ReadonlyMap<string, number>,
  options: BpeTrainOptions,
): ByteLevelBpeTokenizer {
  const specials = [...(options.specialTokens ?? [END_OF_TEXT])];
  const minFrequency = options.minFrequency ?? 2;
  const base = specials.length + 256;
  if (!Number.isSafeInteger(options.vocabSize) || options.vocabSize < base)
    throw new Error(
      `vocabSize must be an integer ≥ ${base} (${specials.length} special + 256 byte tokens), got ${options.vocabSize}`,
    );
  if (options.vocabSize >= PAIR)
    throw new Error(`vocabSize must be < ${PAIR}, got ${options.vocabSize}`);
  if (!Number.isFinite(minFrequency) || minFrequency < 1)
    throw new Error(`minFrequency must be ≥ 1, got ${minFrequency}`);

  const tokens: string[] = [...specials, ...BYTE_TO_CHAR];
  const tokenIds = new Map(tokens.map((t, i) => [t, i] as const));
  if (tokenIds.size !== tokens.length)
    throw new Error(`specialTokens must be distinct and not single byte-level characters`);
  const merges: [string, string][] = [];
  const words: number[][] = [];
  const freq: number[] = [];
  for (const [piece, c] of counts) {
    words.push(Array.from(utf8(piece), (b) => specials.length + b));
    freq.push(c);
  }

  const pairCount = new Map<number, number>();
  const where = new Map<number, Set<number>>();
  const addPairs = (w: number, sign: 1 | -1) => {
    const sym = words[w]!;
    const f = sign * freq[w]!;
    for (let i = 0; i + 1 < sym.length; i++) {
      const key = sym[i]! * PAIR + sym[i + 1]!;
      pairCount.set(key, (pairCount.get(key) ?? 0) + f);
      if (sign > 0) {
        let set = where.get(key);
        if (!set) where.set(key, (set = new Set()));
        set.add(w);
      }
    }
  };
  for (let w = 0; w < words.length; w++) addPairs(w, 1);
  const heap = new PairHeap();
  for (const [key, c] of pairCount) heap.push(c, key);

  while (tokens.length < options.vocabSize) {
    const top = heap.pop();
    if (!top) break;
    const cur = pairCount.get(top.key) ?? 0;
    if (cur !== top.count) {
      if (cur > 0) heap.push(cur, top.key); // stale entry: requeue with the true count
      continue;
    }
    if (cur < minFrequency) break;
    const b = top.key % PAIR;
    const a = (top.key - b) / PAIR;
    // Two merge paths can spell the same string ("ab"+"c", "a"+"bc"): reuse its id then.
    const spelled = tokens[a]! + tokens[b]!;
    let id = tokenIds.get(spelled);
    if (id === undefined) {
      id = tokens.length;
      tokens.push(spelled);
      tokenIds.set(spelled, id);
    }
    merges.push([tokens[a]!, tokens[b]!]);
    const affected = where.get(top.key) ?? new Set<number>();
    where.delete(top.key);
    const fresh = new Set<number>();
    for (const w of affected) {
      const sym = words[w]!;
      let has = false;
      for (let i = 0; i + 1 < sym.length && !has; i++) has = sym[i] === a && sym[i + 1] === b;
      if (!has) continue; // stale index entry
      addPairs(w, -1);
      const next = mergePair(sym, a, b, id);
      words[w] = next;
      addPairs(w, 1);
      for (let i = 0; i + 1 < next.length; i++)
        if (next[i] === id || next[i + 1] === id) fresh.add(next[i]! * PAIR + next[i + 1]!);
    }
    pairCount.delete(top.key);
    for (const key of fresh) heap.push(pairCount.get(key)!, key);
  }
  return new ByteLevelBpeTokenizer({
    tokens,
    merges,
    specialIds: specials.map((_, i) => i),
  });
}

/** Train a byte-level BPE tokenizer on `texts`. */
export function trainBpe(texts: Iterable<string>, options: BpeTrainOptions): ByteLevelBpeTokenizer {
  return trainBpeFromCounts(countPreTokens(texts, options.specialTokens), options);
}
