/*
 * Byte-level BPE (GPT-2 / Hugging Face `tokenizers` model type "BPE" with the `ByteLevel`
 * pre-tokenizer and decoder). Encoding: split out special tokens, pre-tokenise with the GPT-2
 * regex, map each piece's UTF-8 bytes to byte-level characters, then repeatedly merge the
 * adjacent pair with the lowest merge rank (all its non-overlapping occurrences, left to right)
 * until no pair has a rank. Decoding maps tokens back to bytes and decodes UTF-8, so
 * `decode(encode(s)) === s` for every string without lone surrogates (those are not Unicode
 * scalar values; UTF-8 cannot hold them and they come back as U+FFFD, as `TextEncoder` does).
 */
import { BYTE_TO_CHAR, CHAR_TO_BYTE, utf8 } from "./byte-level.js";
import { forEachPreToken } from "./pretokenize.js";
import { TokenTable } from "./token-table.js";
import {
  bpeTokenizerJson,
  IdBuffer,
  splitSpecials,
  type TextTokenizer,
  type TokenizerJson,
} from "./tokenizer.js";

const PAIR = 2 ** 21; // pair key = a·2^21 + b (vocabularies up to 2M entries)

/** `sym` with every adjacent (a, b), taken left to right, replaced by `merged`. */
export function mergePair(sym: readonly number[], a: number, b: number, merged: number): number[] {
  const next: number[] = [];
  for (let i = 0; i < sym.length; i++) {
    if (i + 1 < sym.length && sym[i] === a && sym[i + 1] === b) {
      next.push(merged);
      i++;
    } else next.push(sym[i]!);
  }
  return next;
}

/** A byte-level BPE vocabulary as data: tokens by id, merges in rank order and the special ids. */
export interface BpeDefinition {
  /** Token strings by id (byte-level characters; special tokens as their text). */
  tokens: readonly string[];
  /** Merge rules in rank order, as pairs of token strings. */
  merges: readonly (readonly [string, string])[];
  /** Ids of the special (added) tokens. */
  specialIds: readonly number[];
}

const CACHE_LIMIT = 200_000;

/**
 * A byte-level BPE tokenizer (GPT-2 style pre-tokenisation and merges), read from and written to
 * Hugging Face `tokenizer.json`.
 */
export class ByteLevelBpeTokenizer extends TokenTable implements TextTokenizer {
  /** The tokenizer kind, as `tokenizer.json` records it. */
  readonly kind = "bpe";
  /** The merge rules in rank order. */
  readonly merges: readonly (readonly [string, string])[];
  private readonly byteIds: Int32Array;
  private readonly idBytes: (Uint8Array | null)[];
  /** pair key → rank·2^21 + merged id (a rank first so the lowest rank wins). */
  private readonly ranks: Map<number, number>;
  /** The (a, b) ids of merge `rank` at [2·rank, 2·rank + 1]. */
  private readonly mergeIds: Int32Array;
  private readonly cache = new Map<string, Int32Array>();

  constructor(def: BpeDefinition) {
    if (def.tokens.length >= PAIR)
      throw new Error(`BPE: vocabulary must have < ${PAIR} tokens, got ${def.tokens.length}`);
    super(def.tokens, def.specialIds, "BPE");
    this.merges = Object.freeze(def.merges.map((m) => Object.freeze([m[0], m[1]] as const)));
    this.byteIds = new Int32Array(256);
    for (let b = 0; b < 256; b++) {
      const id = this.ids.get(BYTE_TO_CHAR[b]!);
      if (id === undefined || this.specials.has(BYTE_TO_CHAR[b]!))
        throw new Error(`BPE: vocabulary lacks the byte token "${BYTE_TO_CHAR[b]}" (byte ${b})`);
      this.byteIds[b] = id;
    }
    this.idBytes = this.tokens.map((t, id) => {
      if (this.specials.get(t) === id) return utf8(t);
      const out = new Uint8Array(t.length);
      for (let i = 0; i < t.length; i++) {
        const b = CHAR_TO_BYTE.get(t[i]!);
        if (b === undefined) return null; // not a byte-level token: decodes to nothing usable
        out[i] = b;
      }
      return out;
    });
    this.ranks = new Map();
    this.mergeIds = new Int32Array(2 * this.merges.length);
    this.merges.forEach(([a, b], rank) => {
      const ia = this.ids.get(a);
      const ib = this.ids.get(b);
      const im = this.ids.get(a + b);
      if (ia === undefined || ib === undefined || im === undefined)
        throw new Error(`BPE: merge ${rank} "${a} ${b}" uses a token missing from the vocabulary`);
      this.mergeIds[2 * rank] = ia;
      this.mergeIds[2 * rank + 1] = ib;
      const key = ia * PAIR + ib;
      if (!this.ranks.has(key)) this.ranks.set(key, rank * PAIR + im);
    });
  }

  /** Token ids of one pre-token (no special tokens inside). */
  encodeWord(piece: string): Int32Array {
    const hit = this.cache.get(piece);
    if (hit) return hit;
    const bytes = utf8(piece);
    let sym: number[] = Array.from(bytes, (b) => this.byteIds[b]!);
    while (sym.length > 1) {
      let best = -1;
      for (let i = 0; i + 1 < sym.length; i++) {
        const r = this.ranks.get(sym[i]! * PAIR + sym[i + 1]!);
        if (r !== undefined && (best < 0 || r < best)) best = r;
      }
      if (best < 0) break;
      const merged = best % PAIR;
      const rank = (best - merged) / PAIR;
      const a = this.mergeIds[2 * rank]!;
      const b = this.mergeIds[2 * rank + 1]!;
      sym = mergePair(sym, a, b, merged);
    }
    const out = Int32Array.from(sym);
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(piece, out);
    return out;
  }

  /**
   * The ids of `text`: special tokens matched first, then GPT-2 pre-tokenisation and the merges.
   */
  encode(text: string): Int32Array {
    const out = new IdBuffer(Math.ceil(text.length / 3) + 16);
    splitSpecials(text, this.specials, (part, special) => {
      if (special !== null) out.push(special);
      else forEachPreToken(part, (piece) => out.pushAll(this.encodeWord(piece)));
    });
    return out.toArray();
  }

  /** The bytes of `ids` (special tokens as their UTF-8 text). */
  decodeBytes(ids: ArrayLike<number>): Uint8Array {
    const parts: Uint8Array[] = [];
    let n = 0;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      const bytes = this.idBytes[id];
      if (!bytes)
        throw new Error(
          `ids[${i}] must be a byte-level token id in [0, ${this.tokens.length - 1}], got ${id}`,
        );
      parts.push(bytes);
      n += bytes.length;
    }
    const out = new Uint8Array(n);
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }

  /** Text of `ids`; an incomplete UTF-8 sequence decodes to U+FFFD. */
  decode(ids: ArrayLike<number>): string {
    return new TextDecoder("utf-8").decode(this.decodeBytes(ids));
  }

  /** This tokenizer as a Hugging Face `tokenizer.json` object. */
  toJSON(): TokenizerJson {
    const byteLevel = { type: "ByteLevel", add_prefix_space: false, trim_offsets: true };
    return bpeTokenizerJson(this.tokens, this.specialIds, {
      pre_tokenizer: { ...byteLevel, use_regex: true },
      decoder: { ...byteLevel, use_regex: true },
      unk_token: null,
      // Byte-level tokens never contain a space, so the classic "a b" form is unambiguous.
      merges: this.merges.map(([a, b]) => `${a} ${b}`),
    });
  }
}
