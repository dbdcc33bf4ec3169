/** Test-only tokenizers: greedy longest match over a fixed list of pieces. */
import type { McTokenizer } from "./harness-encode.js";

export function pieceTokenizer(
  pieces: readonly string[],
  eosId: number | null = null,
): McTokenizer & { pieces: readonly string[] } {
  const sorted = pieces.map((p, id) => ({ p, id })).sort((a, b) => b.p.length - a.p.length);
  return {
    pieces,
    eosId,
    encode(text: string): Int32Array {
      const ids: number[] = [];
      let i = 0;
      while (i < text.length) {
        const hit = sorted.find(({ p }) => text.startsWith(p, i));
        if (!hit) throw new Error(`pieceTokenizer: no piece for "${text.slice(i)}"`);
        ids.push(hit.id);
        i += hit.p.length;
      }
      return Int32Array.from(ids);
    },
  };
}
