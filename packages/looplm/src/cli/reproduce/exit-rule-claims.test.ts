import { describe, expect, it } from "vitest";
import {
  operatingPoints,
  type RulePoint,
  ruleRows,
  ruleVerdicts,
  type SeedRulesResult,
} from "./exit-rule-claims.js";

const pt = (rule: string, mean_step: number, value: number): RulePoint => ({
  rule,
  kind: rule.split(":")[0] as RulePoint["kind"],
  threshold: Number(rule.split(":")[1] ?? Number.NaN),
  mean_step,
  value,
  histogram: [],
});

/**
 * Seed k (1..5): fixed exits 0.2 / 0.4 / 0.8 / 1.0 (R = 4, a tiny seed-dependent wobble);
 * entropy:0.5 at mean step 3 with 0.9 + wobble (0.1 above fixed exit 3, 0.1 below fixed:4), and
 * exiting p = 1 at 2 and p = 4 at 3.6; entropy:0.1 at 3.5 with 0.995 (within a point of fixed:4,
 * but saving only 12.5 %); confidence:0.9 at 2.5 with 0.4 (below the frontier's 0.6), p = 1 and
 * p = 4 alike.
 */
function seed(k: number): SeedRulesResult {
  const w = 0.001 * k;
  const perStep = [0.2, 0.4, 0.8, 1.0];
  const fixed = perStep.map((v, r) => pt(`fixed:${r + 1}`, r + 1, v));
  const rules = [
    ...fixed,
    pt("entropy:0.5", 3, 0.9 + w),
    pt("entropy:0.1", 3.5, 0.995 + w / 10),
    pt("confidence:0.9", 2.5, 0.4 + w),
    { ...pt("oracle", 2, 1), threshold: null },
  ];
  const hop = (p: number, e: number, c: number) => ({
    hops: p,
    count: 10,
    perStep,
    rules: [
      ...fixed,
      pt("entropy:0.5", e + w, 0.9),
      pt("entropy:0.1", 3.5, 0.99),
      pt("confidence:0.9", c + w, 0.4),
      { ...pt("oracle", p === 1 ? 1.5 : 2.5, 1), threshold: null },
    ],
  });
  return {
    metric: "accuracy",
    perStep,
    rules,
    byHops: [hop(1, 2, 2.5), hop(4, 3.6, 2.5)],
    timing: rules
      .filter((r) => r.kind !== "oracle")
      .map((r) => ({
        rule: r.rule,
        ms_per_token: r.mean_step / 10,
        mean_step: r.mean_step,
        tokens: 10,
      })),
  };
}

const seeds = [1, 2, 3, 4, 5].map(seed);

describe("exit-rules claims", () => {
  const verdicts = ruleVerdicts(seeds);
  const of = (kind: string, claim: string) =>
    verdicts.find((v) => v.kind === kind && v.claim === claim)!;

  it("(a) compares each threshold with fixed exit interpolated at its own depth", () => {
    const a = of("entropy", "a");
    expect(a.verdict).toBe("holds");
    const t = a.tests.find((x) => x.rule === "entropy:0.5")!;
    expect(t.interval.mean).toBeCloseTo(0.1 + 0.003, 12); // 0.9 + w − fixed exit 3 (0.8)
    expect(of("confidence", "a").verdict).toBe("contradicted"); // 0.4 vs 0.6 at 2.5
  });

  it("(b) tests d(p = 4) − d(p = 1) against one step", () => {
    const b = of("entropy", "b");
    expect(b.tests.find((x) => x.rule === "entropy:0.5")!.interval.mean).toBeCloseTo(0.6, 12);
    expect(b.verdict).toBe("holds");
    expect(of("confidence", "b").verdict).toBe("contradicted"); // the same step for every p
  });

  it("(c) judges only thresholds that save ≥ 20 % in every seed, against one point below R", () => {
    const c = of("entropy", "c");
    // entropy:0.1 is within a point but saves 12.5 %: not eligible; entropy:0.5 is 10 points down
    expect(c.tests.map((t) => t.rule)).toEqual(["entropy:0.5"]);
    expect(c.verdict).toBe("contradicted");
    expect(c.tests[0]!.interval.mean).toBeCloseTo(0.9 + 0.003 - 1 + 0.01, 12);
  });

  it("fewer than 5 seeds read inconclusive; the rows and operating points aggregate over seeds", () => {
    expect(ruleVerdicts(seeds.slice(0, 2)).every((v) => v.verdict === "inconclusive")).toBe(true);
    const rows = ruleRows(seeds);
    const e = rows.find((r) => r.rule === "entropy:0.5")!;
    expect(e.depth.mean).toBe(3);
    expect(e.depthByHops.map((d) => d.mean)).toEqual([2.003, 3.603]);
    expect(e.msPerToken!.mean).toBeCloseTo(0.3, 12);
    expect(rows.find((r) => r.rule === "oracle")!.msPerToken).toBeNull();
    const ops = operatingPoints(rows, "accuracy", 4);
    // entropy's cheapest threshold within a point of fixed:4; confidence has none: its best
    expect(ops.map((o) => o.rule)).toEqual(["confidence:0.9", "entropy:0.1"]);
  });

  it("a study without a per-p evaluation (language modelling) has no claim (b); lower perplexity is better", () => {
    const lm = seeds.map((s): SeedRulesResult => {
      const ppl = (r: RulePoint) => ({ ...r, value: 100 - 50 * r.value });
      return {
        ...s,
        metric: "ppl",
        perStep: s.perStep.map((v) => 100 - 50 * v),
        rules: s.rules.map(ppl),
        byHops: [],
      };
    });
    const v = ruleVerdicts(lm);
    expect(v.some((x) => x.claim === "b")).toBe(false);
    expect(v.map((x) => `${x.kind} ${x.claim}`)).toEqual([
      "confidence a",
      "confidence c",
      "entropy a",
      "entropy c",
    ]);
    // entropy:0.5 at step 3: 55 − w·50 against fixed exit 3's 60, so 5 + 50·w lower
    const a = v.find((x) => x.kind === "entropy" && x.claim === "a")!;
    expect(a.tests.find((t) => t.rule === "entropy:0.5")!.interval.mean).toBeCloseTo(5 + 0.15, 9);
    expect(a.verdict).toBe("holds");
  });
});
