import { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import { describe, expect, it } from "vitest";
import { buildCharTokenizer, CharTokenizer } from "./char-tokenizer.js";
import { tokenizerFromJson } from "./tokenizer-json.js";

const corpus = ["hello world\n\t😀 e\u0301 中文", "<|endoftext|>zz"];
const tok = buildCharTokenizer(corpus);

describe("character tokenizer", () => {
  it("has specials, <unk>, then characters in code-point order", () => {
    expect(tok.tokens.slice(0, 2)).toEqual(["<|endoftext|>", "<unk>"]);
    const chars = tok.tokens.slice(2);
    expect(chars).toContain("😀");
    expect(chars).toContain("\u0301");
    expect(chars).not.toContain("<");
    const cps = chars.map((c) => c.codePointAt(0)!);
    expect(cps).toEqual([...cps].sort((a, b) => a - b));
    expect(tok.eosId).toBe(0);
  });

  it("round-trips text made of known characters, including astral ones", () => {
    for (const t of ["", "hello 😀 world", "e\u0301\n\t中文<|endoftext|>zz", "   "])
      expect(tok.decode(tok.encode(t))).toBe(t);
    expect(tok.encode("😀").length).toBe(1);
  });

  it("maps unseen characters to <unk>", () => {
    expect(Array.from(tok.encode("hq"))).toEqual([tok.tokenToId("h"), tok.unkId]);
    expect(tok.decode(tok.encode("hq"))).toBe("h<unk>");
    expect(() => tok.decode([999])).toThrow(/ids\[0\] must be a token id/);
  });

  it("round-trips through tokenizer.json, and tokenizers.js reads it the same way", () => {
    const back = tokenizerFromJson(JSON.stringify(tok.toJSON()));
    expect(back).toBeInstanceOf(CharTokenizer);
    expect(back.toJSON()).toEqual(tok.toJSON());
    const hf = new HfTokenizer(tok.toJSON(), {});
    for (const t of ["hello 😀 qq e\u0301 <unk>", "<|endoftext|>hello", "wo\nrld"]) {
      expect(back.encode(t)).toEqual(tok.encode(t));
      expect(hf.encode(t, { add_special_tokens: false }).ids).toEqual(Array.from(tok.encode(t)));
      expect(hf.decode(Array.from(tok.encode(t)), { clean_up_tokenization_spaces: false })).toBe(
        tok.decode(tok.encode(t)),
      );
    }
  });
});
