import { describe, expect, it } from "vitest";
import { evaluateMultipleChoice } from "../multiple-choice/evaluate-mc.js";
import type { LoglikRequest } from "../multiple-choice/harness-encode.js";
import { lastWordClozeItems } from "./last-word-cloze.js";

const TEXT = [
  "The cat sat on the warm mat. A dog ran across the green park! Why do birds sing so early?",
  "Short one. We walked to the old harbour at night. The ship left the harbour at dawn.",
].join(" ");

describe("lastWordClozeItems", () => {
  it("blanks the last word of each sentence with enough words, the answer among the choices", () => {
    const items = lastWordClozeItems([TEXT], { choices: 3, seed: 1 });
    // "Short one." has too few words; the other five sentences make items
    expect(items.map((it) => it.choices[it.label])).toEqual([
      "mat",
      "park",
      "early",
      "night",
      "dawn",
    ]);
    expect(items[0]!.context).toBe("The cat sat on the warm");
    expect(items[1]!.context).toBe("The cat sat on the warm mat. A dog ran across the green");
    for (const it of items) {
      expect(it.choices).toHaveLength(3);
      expect(new Set(it.choices.map((c) => c.toLowerCase())).size).toBe(3);
      // distractors are other sentences' last words
      for (const c of it.choices) expect(["mat", "park", "early", "night", "dawn"]).toContain(c);
    }
  });
  it("is deterministic for a seed, draws answer positions, and honours limit and context length", () => {
    const a = lastWordClozeItems([TEXT], { seed: 3 });
    expect(lastWordClozeItems([TEXT], { seed: 3 })).toEqual(a);
    expect(lastWordClozeItems([TEXT], { seed: 4 })).not.toEqual(a);
    const many = lastWordClozeItems([TEXT.repeat(20)], { seed: 0 });
    expect(new Set(many.map((it) => it.label)).size).toBe(4);
    expect(lastWordClozeItems([TEXT], { limit: 2 })).toHaveLength(2);
    const short = lastWordClozeItems([TEXT], { maxContextChars: 20 });
    expect(short[1]!.context).toBe("across the green"); // cut after a space
  });
  it("names what is missing", () => {
    expect(() => lastWordClozeItems(["No sentence ends here"])).toThrow(
      /0 distinct sentence-final words, fewer than the 4 choices/,
    );
    expect(() => lastWordClozeItems([TEXT], { choices: 1 })).toThrow(
      /choices must be an integer ≥ 2/,
    );
  });
  it("a scorer that knows the answers gets every item; one that cannot tell them apart gets chance", () => {
    const items = lastWordClozeItems([TEXT.repeat(40)], { seed: 2 });
    const tok = {
      encode: (s: string) => Int32Array.from([...s].map((c) => c.charCodeAt(0) % 97)),
    };
    // every choice scores the same: the first is picked, right when the answer was drawn there
    const flat = (reqs: readonly LoglikRequest[]) => [new Float64Array(reqs.length)];
    const blind = evaluateMultipleChoice(items, tok, flat).steps[0]!.acc;
    expect(blind).toBeGreaterThan(0.15);
    expect(blind).toBeLessThan(0.35);
    // an oracle: log-likelihood 0 for the right choice, −1 for the others
    const rights = Float64Array.from(
      items.flatMap((it) => it.choices.map((_, c) => (c === it.label ? 0 : -1))),
    );
    const oracle = evaluateMultipleChoice(items, tok, () => [rights]).steps[0]!.acc;
    expect(oracle).toBe(1);
  });
});
