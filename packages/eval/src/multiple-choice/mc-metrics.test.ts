import { describe, expect, it } from "vitest";
import { charLength, mcMetrics, predictItem } from "./mc-metrics.js";

describe("mcMetrics (harness process_results)", () => {
  const items = [
    // acc picks "a" (−2 > −4); acc_norm picks "bbbb" (−4/4 = −1 > −2/1)
    { context: "c", choices: ["a", "bbbb"], label: 1 },
    // both pick choice 0
    { context: "c", choices: ["xy", "z"], label: 0 },
    // ties go to the first maximum (numpy argmax)
    { context: "c", choices: ["p", "q", "r"], label: 2 },
  ];
  const lls = [
    [-2, -4],
    [-1, -5],
    [-3, -3, -3],
  ];

  it("acc = argmax loglik, acc_norm = argmax loglik / characters of the choice", () => {
    expect(predictItem(items[0]!, lls[0]!)).toEqual({ pred: 0, predNorm: 1, predBytes: 1 });
    const m = mcMetrics(items, lls);
    expect(m.acc).toBeCloseTo(1 / 3, 12);
    expect(m.acc_norm).toBeCloseTo(2 / 3, 12);
    expect(m.items).toBe(3);
  });

  it("acc_norm counts characters, acc_bytes UTF-8 bytes", () => {
    // "é" is 1 character but 2 bytes: −1.5/1 < −1/1 by characters, −1.5/2 > −1/1 by bytes
    const item = { context: "c", choices: ["a", "é"], label: 1 };
    expect(charLength("é")).toBe(1);
    expect(predictItem(item, [-1, -1.5])).toEqual({ pred: 0, predNorm: 0, predBytes: 1 });
  });

  it("rejects mismatched counts", () => {
    expect(() => mcMetrics(items, lls.slice(1))).toThrow(
      /expected 3 rows of log-likelihoods, got 2/,
    );
    expect(() => predictItem(items[0]!, [1, 2, 3])).toThrow(/expected 2 log-likelihoods/);
  });
});
