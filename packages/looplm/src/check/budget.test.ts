/** --budget: its durations, and the speed cases it drops (the slowest, never a correctness one). */
import { describe, expect, it } from "vitest";
import { droppedSummary, parseBudget, SpeedPlanner } from "./budget.js";

describe("--budget", () => {
  it("reads durations and refuses anything else in one sentence", () => {
    expect(parseBudget("8m")).toBe(480);
    expect(parseBudget("90s")).toBe(90);
    expect(parseBudget("1.5h")).toBe(5400);
    expect(parseBudget("20")).toBe(20);
    expect(() => parseBudget("eight minutes")).toThrow(
      '--budget: expected a duration such as 8m, 90s or 1h, got "eight minutes"',
    );
    expect(() => parseBudget("0m")).toThrow(/--budget/);
  });

  it("runs the cheap cases, drops from the first that does not fit on, and learns the rate", () => {
    let t = 0;
    // 100 s left, 1 Gflop/s assumed, margin 1.5
    const p = new SpeedPlanner(100, 1e9, () => t);
    expect(p.admit("a", 10e9)).toBe(true); // 15 s
    t = 10;
    p.measured(10e9, 10);
    expect(p.admit("b", 20e9)).toBe(true); // 30 s
    t = 41;
    // the measured rate is slower than assumed: later estimates use it
    p.measured(20e9, 40);
    expect(p.admit("c", 20e9)).toBe(false); // 60 s at 0.5 Gflop/s: 41 + 60 > 100
    expect(p.admit("d", 1e6)).toBe(false); // after a drop, everything later (slower) is dropped
    expect(p.dropped).toEqual([
      { name: "c", estimateS: 60 },
      { name: "d", estimateS: 0.003 },
    ]);
    expect(p.leftS).toBe(59);
    // 41 s spent, 60 s more needed: 101 s, a 2-minute budget
    expect(droppedSummary(p.dropped, p.leftS, 100)).toBe(
      "2 speed case(s) estimated at ~60 s in all, with 59 s of the budget left (--budget 2m would run them): c (~60 s); d (~0.0 s)",
    );
  });
});
