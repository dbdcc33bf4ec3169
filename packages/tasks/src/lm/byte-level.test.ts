import { describe, expect, it } from "vitest";
import { BYTE_TO_CHAR, CHAR_TO_BYTE, toByteLevel } from "./byte-level.js";
import { preTokenize } from "./pretokenize.js";

describe("byte-level alphabet", () => {
  it("maps the 256 bytes to 256 distinct characters as GPT-2 does", () => {
    expect(new Set(BYTE_TO_CHAR).size).toBe(256);
    expect(BYTE_TO_CHAR[0x20]).toBe("Ġ");
    expect(BYTE_TO_CHAR[0x0a]).toBe("Ċ");
    expect(BYTE_TO_CHAR[0]).toBe("Ā");
    expect(BYTE_TO_CHAR[0x21]).toBe("!");
    expect(BYTE_TO_CHAR[0xa0]).toBe("ł"); // no-break space: the 67th unprintable byte → U+0142
    expect(BYTE_TO_CHAR[0xad]).toBe("Ń"); // soft hyphen, the 68th and last → U+0143
    expect(BYTE_TO_CHAR[0xff]).toBe("ÿ");
    for (let b = 0; b < 256; b++) expect(CHAR_TO_BYTE.get(BYTE_TO_CHAR[b]!)).toBe(b);
    expect(toByteLevel("a é")).toBe("aĠÃ©");
  });
});

describe("GPT-2 pre-tokenisation", () => {
  it("splits words, numbers, punctuation, contractions and whitespace runs", () => {
    expect(preTokenize("Hello world's 2024 tests!!  ok\n\n  x")).toEqual([
      "Hello",
      " world",
      "'s",
      " 2024",
      " tests",
      "!!",
      " ",
      " ok",
      "\n\n ",
      " x",
    ]);
    expect(preTokenize("")).toEqual([]);
  });

  it("covers every character, so the pieces join back to the text", () => {
    for (const t of ["  a\t\tb \u3000中文 😀\u200d👩 e\u0301 \ud800 x", "\n", " ", "'ll've"])
      expect(preTokenize(t).join("")).toBe(t);
  });
});
