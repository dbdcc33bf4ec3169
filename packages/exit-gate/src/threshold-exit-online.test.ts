import { Rng } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { ExitGate } from "./exit-gate.js";
import { logOneMinusSigmoid, logSurvivalBound, OnlineThresholdExit } from "./threshold-exit.js";

describe("threshold exit decided online", () => {
  it("ln(1 − q) bound: 0 at q = 0, −∞ at q = 1, rejects q outside [0, 1]", () => {
    expect(logSurvivalBound(0, "op") === 0).toBe(true); // −0: ln S(n) ≤ −0 holds for S = 1
    expect(logSurvivalBound(1, "op")).toBe(Number.NEGATIVE_INFINITY);
    expect(logSurvivalBound(0.5, "op")).toBeCloseTo(Math.log(0.5), 14);
    expect(() => logSurvivalBound(-0.1, "myOp")).toThrow(/myOp: q must be in \[0, 1\], got -0.1/);
    expect(() => logSurvivalBound(Number.NaN, "myOp")).toThrow(/got NaN/);
  });

  it("logsigmoid(−a) equals ln(1 − sigmoid(a)) and stays finite for large |a|", () => {
    for (const a of [-8, -1.5, 0, 0.3, 2, 7])
      expect(logOneMinusSigmoid(a)).toBeCloseTo(Math.log(1 - 1 / (1 + Math.exp(-a))), 12);
    expect(logOneMinusSigmoid(800)).toBeCloseTo(-800, 10);
    expect(logOneMinusSigmoid(-800)).toBe(-0);
  });

  it("the online rule ln S(n) ≤ ln(1 − q) picks the step of CDF(n) ≥ q on the whole pdf", () => {
    const rng = new Rng(11);
    const R = 6;
    let agree = 0;
    for (let trial = 0; trial < 400; trial++) {
      const a = Array.from({ length: R }, () => rng.normal() * 2);
      const q = rng.uniform();
      // Reference: the pdf of docs/exit-gate.md, then its CDF.
      const p: number[] = [];
      let s = 1;
      for (let r = 0; r < R - 1; r++) {
        const lam = 1 / (1 + Math.exp(-a[r]!));
        p.push(lam * s);
        s *= 1 - lam;
      }
      p.push(s);
      let cdf = 0;
      let want = R;
      for (let r = 0; r < R; r++) {
        cdf += p[r]!;
        if (cdf >= q) {
          want = r + 1;
          break;
        }
      }
      const online = new OnlineThresholdExit(q, 1);
      let got = R;
      for (let r = 0; r < R - 1; r++) {
        if (online.step(0, a[r]!)) {
          got = r + 1;
          break;
        }
      }
      expect(got).toBe(want);
      agree++;
    }
    expect(agree).toBe(400);
  });

  it("rejects q outside [0, 1], naming the caller", () => {
    expect(() => new OnlineThresholdExit(1.5, 2, "decodeX")).toThrow(
      /decodeX: q must be in \[0, 1\], got 1.5/,
    );
  });

  it("gate logit of a row: w · row + b", () => {
    const gate = new ExitGate({ dModel: 3 }, { rng: new Rng(1) });
    gate.weight.data.set([0.5, -1, 2]);
    gate.bias.data[0] = 0.25;
    const rows = new Float32Array([1, 2, 3, 4, 5, 6]);
    expect(gate.logitRow(rows, 1)).toBeCloseTo(0.5 * 4 - 5 + 12 + 0.25, 6);
  });
});
