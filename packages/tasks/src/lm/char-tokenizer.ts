/*
 * Character tokenizer: one token per Unicode code point seen in the training text, plus the
 * special tokens and `<unk>` (itself special). Ids: specials first, then `<unk>`, then
 * characters in code-point order. `decode(encode(s)) === s` when every character of s is in
 * the vocabulary; an unseen character encodes to `<unk>` (and decodes to the text "<unk>").
 *
 * As a `tokenizer.json` it is a Hugging Face BPE model without merges, no pre-tokenizer (the
 * text is one word, split into characters), `unk_token` "<unk>" and a `Fuse` decoder.
 */
import { TokenTable } from "./token-table.js";
import {
  bpeTokenizerJson,
  END_OF_TEXT,
  IdBuffer,
  splitSpecials,
  type TextTokenizer,
  type TokenizerJson,
} from "./tokenizer.js";

/** The unknown-character token of a `CharTokenizer`. */
export const UNK = "<unk>";

/** A character-level tokenizer: one id per character seen in training, `<unk>` for others. */
export class CharTokenizer extends TokenTable implements TextTokenizer {
  /** The tokenizer kind, as `tokenizer.json` records it. */
  readonly kind = "char";
  /** The id of `<unk>`, which every unseen character encodes to. */
  readonly unkId: number;

  /** `tokens`: the full vocabulary by id; `specialIds` index into it; `<unk>` must be present. */
  constructor(tokens: readonly string[], specialIds: readonly number[]) {
    super(tokens, specialIds, "char tokenizer");
    const unk = this.ids.get(UNK);
    if (unk === undefined) throw new Error(`char tokenizer: vocabulary lacks "${UNK}"`);
    this.unkId = unk;
  }

  /** One id per character of `text` (`<unk>` for characters not in the vocabulary). */
  encode(text: string): Int32Array {
    const out = new IdBuffer(text.length + 16);
    splitSpecials(text, this.specials, (part, special) => {
      if (special !== null) out.push(special);
      else for (const ch of part) out.push(this.ids.get(ch) ?? this.unkId);
    });
    return out.toArray();
  }

  /** The text of `ids`. */
  decode(ids: ArrayLike<number>): string {
    let s = "";
    for (let i = 0; i < ids.length; i++) {
      const t = this.tokens[ids[i]!];
      if (t === undefined)
        throw new Error(
          `ids[${i}] must be a token id in [0, ${this.tokens.length - 1}], got ${ids[i]}`,
        );
      s += t;
    }
    return s;
  }

  /** This tokenizer as a `tokenizer.json` object. */
  toJSON(): TokenizerJson {
    return bpeTokenizerJson(this.tokens, this.specialIds, {
      pre_tokenizer: null,
      decoder: { type: "Fuse" },
      unk_token: UNK,
      merges: [],
    });
  }
}

/** Build a character tokenizer from the characters of `texts`. */
export function buildCharTokenizer(
  texts: Iterable<string>,
  specialTokens: readonly string[] = [END_OF_TEXT],
): CharTokenizer {
  const specials = new Map(specialTokens.map((s, i) => [s, i] as const));
  const chars = new Set<string>();
  for (const text of texts)
    splitSpecials(text, specials, (part, special) => {
      if (special === null) for (const ch of part) chars.add(ch);
    });
  const sorted = [...chars].sort((a, b) => a.codePointAt(0)! - b.codePointAt(0)!);
  const reserved = [...specialTokens, UNK];
  const tokens = [...reserved, ...sorted.filter((c) => !reserved.includes(c))];
  return new CharTokenizer(
    tokens,
    reserved.map((_, i) => i),
  );
}
