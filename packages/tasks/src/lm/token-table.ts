/*
 * The vocabulary half of a tokenizer, shared by the BPE and character tokenizers: token strings
 * by id, their reverse map, the special (added) tokens and the end-of-text id, with the
 * TextTokenizer accessors over them.
 */
import { END_OF_TEXT } from "./tokenizer.js";

export abstract class TokenTable {
  readonly tokens: readonly string[];
  readonly specialIds: readonly number[];
  readonly eosId: number | null;
  protected readonly ids: Map<string, number>;
  /** Special token text → id (what `splitSpecials` matches). */
  protected readonly specials: Map<string, number>;

  /** `what` names the tokenizer in errors ("BPE", "char tokenizer"). */
  protected constructor(tokens: readonly string[], specialIds: readonly number[], what: string) {
    this.tokens = Object.freeze([...tokens]);
    this.specialIds = Object.freeze([...specialIds]);
    this.ids = new Map();
    this.tokens.forEach((t, i) => {
      if (this.ids.has(t)) throw new Error(`${what}: duplicate token "${t}" at id ${i}`);
      this.ids.set(t, i);
    });
    this.specials = new Map();
    for (const id of this.specialIds) {
      const t = this.tokens[id];
      if (t === undefined)
        throw new Error(`${what}: special token id ${id} is not in the vocabulary`);
      this.specials.set(t, id);
    }
    this.eosId = this.specials.get(END_OF_TEXT) ?? null;
  }

  get vocabSize(): number {
    return this.tokens.length;
  }

  idToToken(id: number): string {
    const t = this.tokens[id];
    if (t === undefined)
      throw new Error(`token id must be an integer in [0, ${this.tokens.length - 1}], got ${id}`);
    return t;
  }

  tokenToId(token: string): number | undefined {
    return this.ids.get(token);
  }
}
