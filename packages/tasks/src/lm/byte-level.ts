/**
 * GPT-2's byte-level alphabet (`bytes_to_unicode` in openai/gpt-2 `encoder.py`, the Hugging Face
 * `ByteLevel` pre-tokenizer/decoder): each of the 256 byte values maps to one printable Unicode
 * character, so byte strings become ordinary strings. Printable Latin-1 bytes ("!"…"~",
 * "¡"…"¬", "®"…"ÿ") map to themselves; the other 68 map to U+0100… in byte order (space → "Ġ").
 */
function buildByteToChar(): string[] {
  const printable = (b: number) =>
    (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const out: string[] = [];
  let n = 0;
  for (let b = 0; b < 256; b++) out.push(String.fromCharCode(printable(b) ? b : 256 + n++));
  return out;
}

/** `BYTE_TO_CHAR[b]` is the character standing for byte b. */
export const BYTE_TO_CHAR: readonly string[] = Object.freeze(buildByteToChar());

/** Inverse of `BYTE_TO_CHAR` (character → byte). */
export const CHAR_TO_BYTE: ReadonlyMap<string, number> = new Map(
  BYTE_TO_CHAR.map((c, b) => [c, b] as const),
);

const utf8Encoder = new TextEncoder();

/** UTF-8 bytes of `text`. Lone surrogates cannot be encoded and become U+FFFD (EF BF BD). */
export function utf8(text: string): Uint8Array {
  return utf8Encoder.encode(text);
}

/** The byte-level string of `text` (one character per UTF-8 byte). */
export function toByteLevel(text: string): string {
  let s = "";
  for (const b of utf8(text)) s += BYTE_TO_CHAR[b];
  return s;
}
