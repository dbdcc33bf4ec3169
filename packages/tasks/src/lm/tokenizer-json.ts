/*
 * Reading Hugging Face `tokenizer.json` objects back into looplm tokenizers. Accepted: model
 * type "BPE" with the ByteLevel pre-tokenizer (a byte-level BPE, e.g. GPT-2's or one trained
 * here) and a merge-less BPE with a `Fuse` decoder and an `unk_token` (the character tokenizer).
 * Merges may be "a b" strings or ["a", "b"] pairs. Anything else is an error naming the field.
 */
import { ByteLevelBpeTokenizer } from "./bpe-tokenizer.js";
import { CharTokenizer } from "./char-tokenizer.js";
import type { TextTokenizer, TokenizerJson } from "./tokenizer.js";

function vocabArray(vocab: Record<string, number>): string[] {
  const tokens: string[] = [];
  for (const [t, id] of Object.entries(vocab)) {
    if (!Number.isInteger(id) || id < 0)
      throw new Error(`tokenizer.json: model.vocab["${t}"] must be an id ≥ 0, got ${id}`);
    if (tokens[id] !== undefined)
      throw new Error(`tokenizer.json: id ${id} is used by "${tokens[id]}" and "${t}"`);
    tokens[id] = t;
  }
  for (let i = 0; i < tokens.length; i++)
    if (tokens[i] === undefined) throw new Error(`tokenizer.json: model.vocab has no id ${i}`);
  return tokens;
}

/** A tokenizer from a parsed `tokenizer.json` object or its text. */
export function tokenizerFromJson(json: TokenizerJson | string): TextTokenizer {
  const j = (typeof json === "string" ? JSON.parse(json) : json) as TokenizerJson;
  if (!j || typeof j !== "object" || !j.model)
    throw new Error("tokenizer.json: expected an object with a model field");
  if (j.model.type !== "BPE")
    throw new Error(
      `tokenizer.json: model.type must be "BPE", got ${JSON.stringify(j.model.type)}`,
    );
  const tokens = vocabArray(j.model.vocab ?? {});
  const added = j.added_tokens ?? [];
  for (const a of added) {
    if (a.id >= tokens.length) tokens[a.id] = a.content;
    else if (tokens[a.id] !== a.content)
      throw new Error(
        `tokenizer.json: added token ${a.id} "${a.content}" differs from vocab "${tokens[a.id]}"`,
      );
  }
  const specialIds = added.filter((a) => a.special).map((a) => a.id);
  if (j.model.merges !== undefined && !Array.isArray(j.model.merges))
    throw new Error(
      `tokenizer.json: model.merges must be an array of "a b" strings or [a, b] pairs, got ${typeof j.model.merges}`,
    );
  const pre = j.pre_tokenizer as { type?: string } | null;
  if (pre?.type === "ByteLevel") {
    const merges = (j.model.merges ?? []).map((m, i): [string, string] => {
      const pair = typeof m === "string" ? m.split(" ") : m;
      if (!Array.isArray(pair) || pair.length !== 2)
        throw new Error(`tokenizer.json: model.merges[${i}] must be "a b" or [a, b], got ${m}`);
      return [pair[0]!, pair[1]!];
    });
    return new ByteLevelBpeTokenizer({ tokens, merges, specialIds });
  }
  if (pre === null && (j.model.merges ?? []).length === 0 && j.model.unk_token) {
    const dec = j.decoder as { type?: string } | null;
    if (dec?.type !== "Fuse")
      throw new Error(`tokenizer.json: a character tokenizer needs decoder.type "Fuse"`);
    return new CharTokenizer(tokens, specialIds);
  }
  throw new Error(
    `tokenizer.json: pre_tokenizer must be {"type": "ByteLevel"} (byte-level BPE) or null with no merges (character tokenizer), got ${JSON.stringify(pre)}`,
  );
}
