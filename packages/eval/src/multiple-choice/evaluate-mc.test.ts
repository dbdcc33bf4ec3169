import { readFileSync } from "node:fs";
import { join } from "node:path";
import { testdataPath } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { tableModel } from "../helpers.test-util.js";
import { evaluateMultipleChoice } from "./evaluate-mc.js";
import { parseMcJsonl } from "./mc-items.js";
import { modelLoglikelihoods } from "./model-loglik.js";
import { parsePiqa, piqaContext } from "./piqa.js";
import { pieceTokenizer } from "./test-tokenizers.js";

const DATA = testdataPath("data");

describe("evaluateMultipleChoice with a stub scorer of known log-likelihoods", () => {
  const tok = pieceTokenizer(["a", "b", "c", "d", " "]);
  const items = [
    { context: "a", choices: ["b", "cc"], label: 1 },
    { context: "b", choices: ["a", "d"], label: 0 },
  ];
  // request order: (item 0, "b"), (item 0, "cc"), (item 1, "a"), (item 1, "d")
  const scorer = () => [Float64Array.of(-1, -3, -2, -1), Float64Array.of(-5, -4, -1, -2)];

  it("reports acc and acc_norm per loop step and regroups log-likelihoods by item", () => {
    const res = evaluateMultipleChoice(items, tok, scorer);
    // step 1: item 0 acc → "b" (wrong), norm: −1/1 vs −3/2 → "b" (wrong); item 1 → "d" (wrong)
    expect(res.steps[0]).toMatchObject({ step: 1, acc: 0, acc_norm: 0, items: 2 });
    // step 2: item 0 acc → "cc" (right), norm −5 vs −2 → "cc"; item 1 → "a" (right)
    expect(res.steps[1]).toMatchObject({ step: 2, acc: 1, acc_norm: 1 });
    expect(res.loglik[1]).toEqual([
      [-5, -4],
      [-1, -2],
    ]);
  });

  it("passes the harness requests to the scorer", () => {
    let seen: number[][] = [];
    evaluateMultipleChoice(items, tok, (reqs) => {
      seen = reqs.map((r) => [...r.input, -1, ...r.continuation]);
      return [new Float64Array(reqs.length)];
    });
    // context "a", continuation " b" → input [a, " "], continuation [" ", b]
    expect(seen[0]).toEqual([0, 4, -1, 4, 1]);
    expect(seen[1]).toEqual([0, 4, 2, -1, 4, 2, 2]);
  });
});

describe("multiple choice with a model forced to prefer one continuation", () => {
  it("picks the continuation the weights make likelier", () => {
    // pieces: 0 "Q", 1 " ", 2 "yes", 3 "no"; after " " the model puts logit 6 on "yes"
    const tok = pieceTokenizer(["Q", " ", "yes", "no"]);
    const model = tableModel(1, 4, (_r, tokens) => {
      const out = new Float32Array(tokens.length * 4);
      tokens.forEach((t, i) => {
        out[i * 4 + (t === 1 ? 2 : 1)] = 6;
      });
      return out;
    });
    const items = [
      { context: "Q", choices: ["no", "yes"], label: 1 },
      { context: "Q", choices: ["yes", "no"], label: 0 },
    ];
    const res = evaluateMultipleChoice(items, tok, (r) => modelLoglikelihoods(model, r));
    expect(res.steps[0]!.acc).toBe(1);
    expect(res.loglik[0]![0]![1]).toBeGreaterThan(res.loglik[0]![0]![0]!);
  });
});

describe("item files", () => {
  it("parses the generic {context, choices, label} JSONL", () => {
    const items = parseMcJsonl(
      '{"context": "2+2=", "choices": ["4", "5"], "label": 0}\n\n{"context": "x", "choices": ["a", "b", "c"], "label": 2}\n',
    );
    expect(items).toEqual([
      { context: "2+2=", choices: ["4", "5"], label: 0 },
      { context: "x", choices: ["a", "b", "c"], label: 2 },
    ]);
  });

  it("names the line and field of a bad item", () => {
    expect(() =>
      parseMcJsonl('{"context": "c", "choices": ["a", "b"], "label": 2}', "f.jsonl"),
    ).toThrow('f.jsonl:1: "label" must be an integer in [0, 1], got 2');
    expect(() => parseMcJsonl('{"context": "c", "choices": ["a"], "label": 0}', "f.jsonl")).toThrow(
      /f.jsonl:1: "choices" must be an array of ≥ 2 strings/,
    );
    expect(() => parseMcJsonl("{nope", "f.jsonl")).toThrow(/f.jsonl:1: not valid JSON/);
    expect(() => parseMcJsonl("\n", "f.jsonl")).toThrow(/no items/);
  });

  it("reads PIQA items and labels the harness way (first items of the validation set)", () => {
    const lines = readFileSync(join(DATA, "piqa-valid.jsonl"), "utf8").split("\n").slice(0, 5);
    const labels = readFileSync(join(DATA, "piqa-valid-labels.lst"), "utf8")
      .split("\n")
      .slice(0, 5);
    const items = parsePiqa(lines.join("\n"), labels.join("\n"));
    expect(items).toHaveLength(5);
    items.forEach((it, i) => {
      const raw = JSON.parse(lines[i]!) as { goal: string; sol1: string; sol2: string };
      expect(it.context).toBe(`Question: ${raw.goal}\nAnswer:`);
      expect(it.context).toBe(piqaContext(raw.goal));
      expect(it.choices).toEqual([raw.sol1, raw.sol2]);
      expect(it.label).toBe(Number(labels[i]));
    });
  });

  it("rejects PIQA label files that do not line up", () => {
    const row = '{"goal": "g", "sol1": "a", "sol2": "b"}';
    expect(() => parsePiqa(row, "0\n1\n", { labels: "l.lst" })).toThrow(
      /l.lst: has 2 labels but piqa.jsonl has 1 items/,
    );
    expect(() => parsePiqa(row, "2\n", { labels: "l.lst" })).toThrow(
      /l.lst:1: label must be 0 or 1, got "2"/,
    );
    expect(() => parsePiqa('{"goal": 1, "sol1": "a", "sol2": "b"}', "0")).toThrow(
      /"goal" must be a string/,
    );
    // a missing field is named, even when the label count no longer matches either
    expect(() =>
      parsePiqa('{"goal": "g", "sol1": "a"}', "0\n1\n", { data: "p.jsonl", labels: "l.lst" }),
    ).toThrow('p.jsonl:1: the item has no "sol2" (PIQA items are {goal, sol1, sol2})');
  });
});
