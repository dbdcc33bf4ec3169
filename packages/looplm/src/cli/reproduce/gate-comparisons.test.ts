import { describe, expect, it } from "vitest";
import { fiveGateSeeds } from "./five-seeds.test-util.js";
import { hopsMetricTable, hopsRows, hopsStepTable } from "./gate-by-hops.js";
import { comparisonTable, gateComparisons, holmReading } from "./gate-comparisons.js";
import type { SeedGateResult } from "./gate-frontier.js";
import { holmAdjust, tTestP } from "./multiple-comparisons.js";

const five = fiveGateSeeds;

describe("the gate against fixed exit at equal depth, at ⌈d⌉ and at R", () => {
  const wins = { q: 0.1, depth: [1.5, 1.5, 1.5, 1.5, 1.5], value: [0.5, 0.52, 0.49, 0.51, 0.5] };
  const near = { q: 0.5, depth: [2.2, 2.3, 2.1, 2.2, 2.4], value: [0.85, 0.8, 0.88, 0.84, 0.86] };
  const atR = { q: 0.9, depth: [3, 3, 3, 3, 3], value: [0.9, 0.9, 0.9, 0.9, 0.9] };
  const rows = gateComparisons(five([wins, near, atR]));

  it("pairs each seed's gate with its own fixed exits, leaving out points at depth R", () => {
    expect(rows.map((c) => `${c.against} ${c.q}`)).toEqual([
      "equal depth 0.1",
      "equal depth 0.5",
      "⌈d⌉ 0.1",
      "⌈d⌉ 0.5",
      "R 0.1",
      "R 0.5",
    ]);
    const at = (a: string, q: number) => rows.find((c) => c.against === a && c.q === q)!;
    // equal depth 1.5: fixed exit 0.4; ⌈1.5⌉ = 2: 0.6; R = 3: 0.9
    expect(at("equal depth", 0.1).gains[0]).toBeCloseTo(0.1, 12);
    expect(at("⌈d⌉", 0.1).gains[0]).toBeCloseTo(-0.1, 12);
    expect(at("R", 0.1).gains[0]).toBeCloseTo(-0.4, 12);
    // seed 1 of q = 0.5 at depth 2.2: equal depth 0.6 + 0.2·0.3 = 0.66; ⌈2.2⌉ = 3: 0.9
    expect(at("equal depth", 0.5).gains[0]).toBeCloseTo(0.85 - 0.66, 12);
    expect(at("⌈d⌉", 0.5).gains[0]).toBeCloseTo(0.85 - 0.9, 12);
  });

  it("adjusts the p values with Holm within each comparison, over its q values", () => {
    for (const against of ["equal depth", "⌈d⌉", "R"]) {
      const fam = rows.filter((c) => c.against === against);
      expect(fam.map((c) => c.p)).toEqual(fam.map((c) => tTestP(c.gains)));
      expect(fam.map((c) => c.pHolm)).toEqual(holmAdjust(fam.map((c) => c.p)));
      for (const c of fam) expect(c.pHolm).toBeGreaterThanOrEqual(c.p);
    }
    const r01 = rows.find((c) => c.against === "R" && c.q === 0.1)!;
    expect(holmReading(r01)).toBe("contradicted");
    const t = comparisonTable(rows, "accuracy", true).split("\n");
    expect(t[0]).toMatch(/^\| against fixed exit \| q \| gate's mean exit step \| gain/);
    expect(t[2]).toMatch(
      /^\| at equal depth \(interpolated\) \| 0\.1 \| 1\.50 \| \+10\.40 \| \[\+8\.98, \+11\.82\] \| /,
    );
    expect(t).toHaveLength(2 + rows.length);
  });
});

describe("a mixed-difficulty gate study by difficulty", () => {
  const seed = (shift: number): SeedGateResult => ({
    metric: "accuracy",
    perStep: [0.5, 0.7],
    gated: [{ q: 0.5, mean_step: 1.5, value: 0.6, histogram: [1, 1] }],
    byHops: [
      {
        hops: 1,
        count: 10,
        perStep: [0.9 + shift, 0.95],
        gated: [{ q: 0.5, mean_step: 1.1, value: 0.9, histogram: [9, 1] }],
      },
      {
        hops: 2,
        count: 6,
        perStep: [0.3, 0.5 + shift],
        gated: [{ q: 0.5, mean_step: 1.9 + shift, value: 0.5, histogram: [1, 5] }],
      },
    ],
  });
  it("aggregates each p's fixed exits, gate accuracy and mean exit step over seeds", () => {
    const rows = hopsRows([seed(0), seed(0.1)]);
    expect(rows.map((h) => [h.hops, h.count])).toEqual([
      [1, 10],
      [2, 6],
    ]);
    expect(rows[0]!.perStep[0]).toEqual([0.9, expect.closeTo(1.0, 12)]);
    expect(rows[1]!.gated[0]!.step).toEqual([1.9, expect.closeTo(2.0, 12)]);
    const steps = hopsStepTable(rows, true).split("\n");
    expect(steps[2]).toBe("| 1 | 1.10 ± 0.00 |");
    expect(steps[3]).toBe("| 2 | 1.95 ± 0.07 |");
    const acc = hopsMetricTable(rows, "accuracy", true).split("\n");
    expect(acc[0]).toBe("| p (hops) | rows | fixed exit 1 | fixed exit 2 | gate q = 0.5 |");
    expect(acc[2]).toBe("| 1 | 10 | 95.00 ± 7.07 % | 95.00 ± 0.00 % | 90.00 ± 0.00 % |");
  });
  it("names seeds evaluated without difficulties", () => {
    const { byHops: _, ...plain } = seed(0);
    expect(() => hopsRows([plain])).toThrow(/not evaluated by difficulty/);
    expect(() => hopsRows([seed(0), { ...seed(0), byHops: [] }])).toThrow(
      /seed 2 has no evaluation at p = 1/,
    );
  });
});
