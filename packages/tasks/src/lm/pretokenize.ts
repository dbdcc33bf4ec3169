/**
 * GPT-2 pre-tokenisation (the Hugging Face `ByteLevel` pre-tokenizer with `use_regex: true`):
 * contractions, an optional space followed by letters, by digits, or by other non-space
 * symbols, then whitespace runs (a run before a non-space keeps its last space for the next
 * word). Every character falls in some alternative, so the pieces concatenate back to the text.
 */
export const GPT2_SPLIT_PATTERN =
  "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

const splitRegex = new RegExp(GPT2_SPLIT_PATTERN, "gu");

/** The pre-tokens of `text`, in order. */
export function preTokenize(text: string): string[] {
  return text.match(splitRegex) ?? [];
}

/** Call `fn` for each pre-token of `text` without building an array. */
export function forEachPreToken(text: string, fn: (piece: string) => void): void {
  splitRegex.lastIndex = 0;
  for (let m = splitRegex.exec(text); m !== null; m = splitRegex.exec(text)) fn(m[0]);
}
