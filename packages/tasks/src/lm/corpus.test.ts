import { describe, expect, it } from "vitest";
import { splitCorpus } from "./corpus.js";

const docs = Array.from({ length: 40 }, (_, i) => ({ name: `d${i}`, text: `text ${i}` }));

describe("splitCorpus", () => {
  it("holds out whole documents deterministically and disjointly", () => {
    const a = splitCorpus(docs, { validationFraction: 0.1, seed: 3 });
    expect(a.validation.length).toBe(4);
    expect(a.train.length).toBe(36);
    const names = [...a.train, ...a.validation].map((d) => d.name).sort();
    expect(names).toEqual(docs.map((d) => d.name).sort());
    expect(splitCorpus(docs, { validationFraction: 0.1, seed: 3 })).toEqual(a);
    expect(splitCorpus(docs, { validationFraction: 0.1, seed: 4 }).validation).not.toEqual(
      a.validation,
    );
    // training documents keep corpus order
    const idx = a.train.map((d) => Number(d.name.slice(1)));
    expect(idx).toEqual([...idx].sort((x, y) => x - y));
  });

  it("keeps at least one document on each side", () => {
    const two = splitCorpus(docs.slice(0, 2), { validationFraction: 0.9 });
    expect([two.train.length, two.validation.length]).toEqual([1, 1]);
  });

  it("cuts a single document at the fraction without splitting a surrogate pair", () => {
    const s = splitCorpus([{ name: "one", text: "abcdefghij" }], { validationFraction: 0.2 });
    expect(s.train[0]!.text).toBe("abcdefgh");
    expect(s.validation[0]!.text).toBe("ij");
    const e = splitCorpus([{ name: "e", text: "ab😀cd" }], { validationFraction: 0.5 });
    expect(e.train[0]!.text + e.validation[0]!.text).toBe("ab😀cd");
    expect(e.train[0]!.text).toBe("ab😀");
  });

  it("rejects bad options", () => {
    expect(() => splitCorpus(docs, { validationFraction: 1 })).toThrow(
      /validationFraction must be in \(0, 1\), got 1/,
    );
    expect(() => splitCorpus([])).toThrow(/no documents/);
  });
});
