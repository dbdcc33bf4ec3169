import { describe, expect, it } from "vitest";
import { exitStepName, formatQ } from "./format-q.js";

describe("formatQ", () => {
  it("writes up to 4 decimals without trailing zeros", () => {
    expect(formatQ(0.5)).toBe("0.5");
    expect(formatQ(0.25)).toBe("0.25");
    expect(formatQ(1)).toBe("1");
    expect(formatQ(0)).toBe("0");
    expect(formatQ(0.1234)).toBe("0.1234");
    expect(formatQ(0.12345678)).toBe("0.1235");
    expect(formatQ(0.0001)).toBe("0.0001");
    expect(formatQ(0.9)).toBe("0.9");
    expect(formatQ(0.1 + 0.2)).toBe("0.3");
    expect(formatQ(-0)).toBe("0");
  });

  it("names exit-step outputs", () => {
    expect(exitStepName(0.75)).toBe("exit.step.q0.75");
    expect(exitStepName(1)).toBe("exit.step.q1");
  });

  it("rejects a non-finite q", () => {
    expect(() => formatQ(Number.NaN)).toThrow(/q must be a finite number, got NaN/);
  });
});
