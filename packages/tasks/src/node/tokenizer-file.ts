/* Reading and writing `tokenizer.json` files (atomic write: temporary file beside it, then rename). */
import { readInputText, writeFileAtomic } from "@loop/tensor/node";
import type { TextTokenizer } from "../lm/tokenizer.js";
import { tokenizerFromJson } from "../lm/tokenizer-json.js";

/** Write `tokenizer` to `path` as a Hugging Face `tokenizer.json`, atomically. */
export async function writeTokenizerFile(path: string, tokenizer: TextTokenizer): Promise<void> {
  writeFileAtomic(path, `${JSON.stringify(tokenizer.toJSON(), null, 2)}\n`);
}

/**
 * Read a `tokenizer.json` (byte-level BPE or character) written by `writeTokenizerFile` or Hugging
 * Face; errors name the file.
 */
export async function readTokenizerFile(path: string): Promise<TextTokenizer> {
  // (by the one input rule: only a regular file, never opened blocking, and UTF-8)
  const text = readInputText(path, { what: "a tokenizer file" });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new Error(`tokenizer: "${path}" is not JSON (${(e as Error).message})`);
  }
  try {
    return tokenizerFromJson(json as never);
  } catch (e) {
    throw new Error(`${(e as Error).message} (in "${path}")`);
  }
}
