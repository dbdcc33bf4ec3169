import { describe, expect, it } from "vitest";
import { printable } from "./printable.js";

describe("printable", () => {
  it("escapes every control character, so a label cannot forge a line or drive the terminal", () => {
    expect(printable("1⊗2\nlooplm: FAKE all jobs done")).toBe("1⊗2\\nlooplm: FAKE all jobs done");
    expect(printable("\x1b[2J\x1b[31mred\r\t\x00\x7f\x9b")).toBe(
      "\\x1b[2J\\x1b[31mred\\r\\t\\x00\\x7f\\x9b",
    );
    expect(printable("evil\u202egnp.exe \u2028x")).toBe("evil\\u202egnp.exe \\u2028x");
  });
  it("leaves ordinary text alone", () => {
    const s = "job 1⊗4: /shared/runs/x y/1x4 — ppl 3.25 (ünïcödé, 中文, 😀)";
    expect(printable(s)).toBe(s);
    expect(printable(42)).toBe("42");
  });
});
