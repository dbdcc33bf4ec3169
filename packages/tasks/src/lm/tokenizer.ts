/** What the language-modelling task needs from a tokenizer. */
export interface TextTokenizer {
  readonly kind: "bpe" | "char";
  readonly vocabSize: number;
  /** Token ids of `text`. */
  encode(text: string): Int32Array;
  /** The text of `ids`; `decode(encode(s)) === s` for every well-formed string `s`. */
  decode(ids: ArrayLike<number>): string;
  /** The vocabulary entry of `id` (byte-level characters for BPE). */
  idToToken(id: number): string;
  /** The id of a vocabulary entry, or undefined. */
  tokenToId(token: string): number | undefined;
  /** The id of the end-of-text (document separator) token, or null when there is none. */
  readonly eosId: number | null;
  /** The Hugging Face `tokenizer.json` object of this tokenizer. */
  toJSON(): TokenizerJson;
}

/** The subset of the Hugging Face `tokenizer.json` format that looplm writes and reads. */
export interface TokenizerJson {
  version: string;
  truncation: null;
  padding: null;
  added_tokens: AddedTokenJson[];
  normalizer: null;
  pre_tokenizer: Record<string, unknown> | null;
  post_processor: Record<string, unknown> | null;
  decoder: Record<string, unknown> | null;
  model: {
    type: "BPE";
    dropout: null;
    unk_token: string | null;
    continuing_subword_prefix: string | null;
    end_of_word_suffix: string | null;
    fuse_unk: boolean;
    byte_fallback: boolean;
    ignore_merges?: boolean;
    vocab: Record<string, number>;
    merges: (string | [string, string])[];
  };
}

/** One added (special) token as Hugging Face `tokenizer.json` lists it. */
export interface AddedTokenJson {
  id: number;
  content: string;
  single_word: boolean;
  lstrip: boolean;
  rstrip: boolean;
  normalized: boolean;
  special: boolean;
}

/** The end-of-text special token, GPT-2's `<|endoftext|>`. */
export const END_OF_TEXT = "<|endoftext|>";

export function addedToken(id: number, content: string): AddedTokenJson {
  return {
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  };
}

/**
 * The `tokenizer.json` of a BPE model over `tokens` (id = index) with `specialIds` as added
 * tokens: the fields every looplm tokenizer writes alike, around the ones it chooses.
 */
export function bpeTokenizerJson(
  tokens: readonly string[],
  specialIds: readonly number[],
  own: Pick<TokenizerJson, "pre_tokenizer" | "decoder"> & {
    unk_token: string | null;
    merges: string[];
  },
): TokenizerJson {
  const vocab: Record<string, number> = {};
  tokens.forEach((t, i) => {
    vocab[t] = i;
  });
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: specialIds.map((id) => addedToken(id, tokens[id]!)),
    normalizer: null,
    pre_tokenizer: own.pre_tokenizer,
    post_processor: null,
    decoder: own.decoder,
    model: {
      type: "BPE",
      dropout: null,
      unk_token: own.unk_token,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: own.merges,
    },
  };
}

/** A growable Int32Array. */
export class IdBuffer {
  private buf: Int32Array;
  length = 0;

  constructor(capacity = 1024) {
    this.buf = new Int32Array(Math.max(16, capacity));
  }

  push(id: number): void {
    if (this.length === this.buf.length) {
      const next = new Int32Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = id;
  }

  pushAll(ids: ArrayLike<number>): void {
    for (let i = 0; i < ids.length; i++) this.push(ids[i]!);
  }

  toArray(): Int32Array {
    return this.buf.slice(0, this.length);
  }
}

/** Split `text` around occurrences of the special strings (longest first); `fn` gets each part. */
export function splitSpecials(
  text: string,
  specials: ReadonlyMap<string, number>,
  fn: (part: string, specialId: number | null) => void,
): void {
  if (specials.size === 0) {
    if (text.length > 0) fn(text, null);
    return;
  }
  const names = [...specials.keys()].sort((a, b) => b.length - a.length);
  const re = new RegExp(names.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
  let last = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m.index > last) fn(text.slice(last, m.index), null);
    fn(m[0], specials.get(m[0])!);
    last = m.index + m[0].length;
  }
  if (last < text.length) fn(text.slice(last), null);
}
