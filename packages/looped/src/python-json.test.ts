import { describe, expect, it } from "vitest";
import { parsePythonJson, pythonJson } from "./python-json.js";

describe("JSON as Python's json module writes it", () => {
  it("reads bare Infinity, -Infinity and NaN (json.dumps' spelling), and plain JSON as JSON.parse", () => {
    const text =
      '{\n  "a": [\n    0.0,\n    Infinity\n  ],\n  "b": -Infinity,\n  "c": NaN,\n  "d": 1e-05\n}\n';
    const v = parsePythonJson(text) as Record<string, unknown>;
    expect(v.a).toEqual([0, Number.POSITIVE_INFINITY]);
    expect(v.b).toBe(Number.NEGATIVE_INFINITY);
    expect(v.c).toBeNaN();
    expect(v.d).toBe(1e-5);
    const plain = '{"x": [1, 2.5, "Infinity"], "y": {"z": null}}';
    expect(parsePythonJson(plain)).toEqual(JSON.parse(plain));
    expect(() => parsePythonJson("{oops")).toThrow();
  });

  it("writes non-finite numbers bare and everything else as JSON.stringify(v, null, 2)", () => {
    const v = {
      lim: [0, Number.POSITIVE_INFINITY],
      lo: Number.NEGATIVE_INFINITY,
      n: Number.NaN,
      s: "Infinity",
    };
    const text = pythonJson(v);
    expect(text).toBe(
      '{\n  "lim": [\n    0,\n    Infinity\n  ],\n  "lo": -Infinity,\n  "n": NaN,\n  "s": "Infinity"\n}',
    );
    const back = parsePythonJson(text) as typeof v;
    expect(back.lim).toEqual(v.lim);
    expect(back.s).toBe("Infinity");
    const finite = { a: [1, 2], b: "c" };
    expect(pythonJson(finite)).toBe(JSON.stringify(finite, null, 2));
    expect(() => pythonJson({ k: "\u0000looplm-non-finite:NaN" })).toThrow(/reserved/);
  });
});
