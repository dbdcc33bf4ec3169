import { readFileSync } from "node:fs";
import { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import { Rng } from "@loop/tensor";
import { testdataPath } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { ByteLevelBpeTokenizer } from "./bpe-tokenizer.js";
import { countPreTokens, trainBpe, trainBpeFromCounts } from "./bpe-trainer.js";
import { BYTE_TO_CHAR } from "./byte-level.js";
import { tokenizerFromJson } from "./tokenizer-json.js";

const shakespeare = readFileSync(testdataPath("data", "tinyshakespeare.txt"), "utf8");

/** Plain reference trainer: recount every pair of every word at every step. */
function referenceMerges(counts: Map<string, number>, vocabSize: number, minFrequency = 2) {
  const tokens = ["<|endoftext|>", ...BYTE_TO_CHAR];
  const words = [...counts].map(([w, c]) => ({
    sym: Array.from(new TextEncoder().encode(w), (b) => 1 + b),
    c,
  }));
  const merges: [string, string][] = [];
  while (tokens.length < vocabSize) {
    const pc = new Map<string, number>();
    for (const { sym, c } of words)
      for (let i = 0; i + 1 < sym.length; i++) {
        const k = `${sym[i]},${sym[i + 1]}`;
        pc.set(k, (pc.get(k) ?? 0) + c);
      }
    let best: [number, number] | null = null;
    let bestC = 0;
    for (const [k, c] of pc) {
      const [a, b] = k.split(",").map(Number) as [number, number];
      if (c > bestC || (c === bestC && best && (a < best[0] || (a === best[0] && b < best[1])))) {
        best = [a, b];
        bestC = c;
      }
    }
    if (!best || bestC < minFrequency) break;
    const [a, b] = best;
    const s = tokens[a]! + tokens[b]!;
    let id = tokens.indexOf(s);
    if (id < 0) id = tokens.push(s) - 1;
    merges.push([tokens[a]!, tokens[b]!]);
    for (const w of words) {
      const next: number[] = [];
      for (let i = 0; i < w.sym.length; i++)
        if (w.sym[i] === a && w.sym[i + 1] === b) {
          next.push(id);
          i++;
        } else next.push(w.sym[i]!);
      w.sym = next;
    }
  }
  return { tokens, merges };
}

const EDGE_CASES = [
  "",
  " ",
  "   \t\t\n\n\r\n  ",
  "Hello, world!",
  "emoji 😀👍🏽 👩‍👩‍👧‍👦 🇫🇷 ❤️",
  "combining e\u0301 a\u0308\u0323 Z\u0351\u0362\u035a",
  "CJK 中文字符 日本語のテキスト 한국어",
  "RTL مرحبا بالعالم שלום",
  "controls \u0000\u0001\u001f\u007f and \u00a0nbsp \u2028 \ufeff bom",
  "mixed 123abc's they'll 3.14159 --- ...",
  "<|endoftext|>between<|endoftext|><|endoftext|>",
  "\u{10ffff}\u{1f600}\u{e000}",
];

/** Seeded random strings of code points from every plane (no lone surrogates). */
function randomStrings(n: number, seed: number): string[] {
  const rng = new Rng(seed);
  const pools = [
    [0x20, 0x7e],
    [0, 0x1f],
    [0xa0, 0x2fff],
    [0x3000, 0xd7ff],
    [0xe000, 0xffff],
    [0x10000, 0x10ffff],
  ] as const;
  return Array.from({ length: n }, () => {
    let s = "";
    const len = rng.int(40);
    for (let i = 0; i < len; i++) {
      const [lo, hi] = pools[rng.int(pools.length)]!;
      s += String.fromCodePoint(rng.intIn(lo, hi));
    }
    return s;
  });
}

const trained = trainBpe([shakespeare.slice(0, 300_000)], { vocabSize: 700 });

describe("BPE trainer", () => {
  it("learns the same merges as a plain reference trainer", () => {
    const text = `${shakespeare.slice(0, 20_000)} aaaa abab ababab ${"é".repeat(5)} 😀😀`;
    const counts = countPreTokens([text]);
    const fast = trainBpeFromCounts(counts, { vocabSize: 420 });
    const ref = referenceMerges(counts, 420);
    expect(fast.merges.map((m) => [...m])).toEqual(ref.merges);
    expect(fast.tokens).toEqual(ref.tokens);
  });

  it("puts specials first, then the 256 bytes, then merges", () => {
    expect(trained.tokens[0]).toBe("<|endoftext|>");
    expect(trained.tokens.slice(1, 257)).toEqual(BYTE_TO_CHAR);
    expect(trained.vocabSize).toBe(700);
    expect(trained.merges.length).toBe(700 - 257);
    expect(trained.eosId).toBe(0);
  });

  it("compresses held-out text", () => {
    const heldOut = shakespeare.slice(600_000, 700_000);
    const bytes = new TextEncoder().encode(heldOut).length;
    const ids = trained.encode(heldOut);
    // fewer than one token per two bytes with only 443 merges (measured 0.47)
    expect(ids.length / bytes).toBeLessThan(0.5);
    expect(trained.decode(ids)).toBe(heldOut);
  });

  it("stops early when no pair is frequent enough, and rejects bad options", () => {
    const tiny = trainBpe(["ab ab ab cd"], { vocabSize: 4096 });
    expect(tiny.merges.map((m) => m.join(" "))).toEqual(["a b", "Ġ ab"]);
    expect(() => trainBpe(["x"], { vocabSize: 100 })).toThrow(
      /vocabSize must be an integer ≥ 257 \(1 special \+ 256 byte tokens\), got 100/,
    );
    expect(() => trainBpe(["x"], { vocabSize: 300, minFrequency: 0 })).toThrow(/minFrequency/);
  });

  it("is deterministic", () => {
    const again = trainBpe([shakespeare.slice(0, 300_000)], { vocabSize: 700 });
    expect(JSON.stringify(again.toJSON())).toBe(JSON.stringify(trained.toJSON()));
  });
});

describe("byte-level BPE tokenizer", () => {
  it("round-trips Unicode edge cases and random strings exactly", () => {
    for (const t of [...EDGE_CASES, ...randomStrings(300, 1)]) {
      const ids = trained.encode(t);
      expect(trained.decode(ids)).toBe(t);
    }
    expect(trained.encode("")).toEqual(new Int32Array(0));
  });

  it("encodes special tokens atomically", () => {
    const ids = Array.from(trained.encode("a<|endoftext|>b"));
    expect(ids).toEqual([trained.tokenToId("a"), 0, trained.tokenToId("b")]);
  });

  it("turns lone surrogates (not encodable in UTF-8) into U+FFFD, like TextEncoder", () => {
    expect(trained.decode(trained.encode("x\ud800y\udfff"))).toBe("x\ufffdy\ufffd");
  });

  it("decodes a split multi-byte character to U+FFFD and arbitrary ids to their bytes", () => {
    const ids = trained.encode("😀");
    expect(trained.decodeBytes(ids)).toEqual(new TextEncoder().encode("😀"));
    expect(trained.decode(ids.subarray(0, 1))).toContain("\ufffd");
    expect(() => trained.decode([trained.vocabSize])).toThrow(/ids\[0\] must be/);
  });

  it("round-trips through tokenizer.json with identical encodings", () => {
    const json = JSON.stringify(trained.toJSON());
    const back = tokenizerFromJson(json);
    expect(back).toBeInstanceOf(ByteLevelBpeTokenizer);
    expect(JSON.stringify(back.toJSON())).toBe(json);
    for (const t of [...EDGE_CASES, shakespeare.slice(700_000, 720_000)])
      expect(back.encode(t)).toEqual(trained.encode(t));
    // merges written as [a, b] pairs (newer tokenizers) read the same
    const j = trained.toJSON();
    j.model.merges = j.model.merges.map((m) => (m as string).split(" ") as [string, string]);
    expect(tokenizerFromJson(j).encode(EDGE_CASES[4]!)).toEqual(trained.encode(EDGE_CASES[4]!));
  });

  it("encodes exactly as Hugging Face tokenizers.js reading our tokenizer.json", () => {
    const hf = new HfTokenizer(trained.toJSON(), {});
    for (const t of [...EDGE_CASES, ...randomStrings(100, 2), shakespeare.slice(0, 5000)]) {
      const ours = Array.from(trained.encode(t));
      expect(hf.encode(t, { add_special_tokens: false }).ids).toEqual(ours);
      if (ours.length > 0) expect(hf.decode(ours, { clean_up_tokenization_spaces: false })).toBe(t);
    }
  });

  it("rejects malformed tokenizer.json", () => {
    const j = trained.toJSON();
    expect(() =>
      tokenizerFromJson({ ...j, model: { ...j.model, type: "WordPiece" as "BPE" } }),
    ).toThrow(/model.type must be "BPE", got "WordPiece"/);
    expect(() =>
      tokenizerFromJson({ ...j, model: { ...j.model, merges: ["Ġ t", "zzz qqq"] } }),
    ).toThrow(/merge 1 "zzz qqq" uses a token missing/);
    expect(() =>
      tokenizerFromJson({ ...j, model: { ...j.model, merges: "Ġ t" as unknown as string[] } }),
    ).toThrow(
      /^tokenizer.json: model.merges must be an array of "a b" strings or \[a, b\] pairs, got string$/,
    );
    const noBytes = { ...j.model.vocab };
    delete noBytes.Ā;
    expect(() => tokenizerFromJson({ ...j, model: { ...j.model, vocab: noBytes } })).toThrow(
      /model.vocab has no id 1|lacks the byte token/,
    );
    expect(() => tokenizerFromJson({ ...j, pre_tokenizer: { type: "Whitespace" } })).toThrow(
      /pre_tokenizer must be/,
    );
  });
});
