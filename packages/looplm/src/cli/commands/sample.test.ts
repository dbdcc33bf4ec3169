import { afterEach, describe, expect, it, vi } from "vitest";
import { CliError } from "../errors.js";
import { buildProgram } from "../program.js";
import { run as runInProcess } from "../run-in-process.test-util.js";

/** Run `looplm <args>` in-process; returns what it wrote to stdout. */
const run = async (...args: string[]): Promise<string> => (await runInProcess(...args)).out;

afterEach(() => {
  vi.restoreAllMocks();
});

/** Independent Mano checker: evaluate the prefix expression mod 23 by recursive descent. */
function evalMano(expr: string[]): number {
  let i = 0;
  const next = (): number => {
    const t = expr[i++]!;
    if (t === "+") return (next() + next()) % 23;
    if (t === "-") {
      const a = next();
      return (((a - next()) % 23) + 23) % 23;
    }
    if (t === "*") return (next() * next()) % 23;
    const v = Number(t);
    if (!Number.isInteger(v) || v < 0 || v > 22) throw new Error(`bad leaf ${t}`);
    return v;
  };
  const v = next();
  if (i !== expr.length) throw new Error("trailing tokens");
  return v;
}

/** Independent p-hop checker: follow the hops by scanning backwards. */
function followHops(v: string[], p: number): string | null {
  let pos = v.length - 1; // 0-based
  for (let h = 0; h < p; h++) {
    let j = pos - 1;
    while (j >= 0 && v[j] !== v[pos]) j--;
    if (j < 0) return null;
    pos = j + 1;
  }
  return v[pos]!;
}

const lines = (s: string) =>
  s
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));

describe("looplm sample mano", () => {
  it("prints --count JSONL examples whose answers check out", async () => {
    const out = await run("sample", "mano", "--max-ops", "6", "--count", "400", "--seed", "5");
    const rows = lines(out);
    expect(rows.length).toBe(400);
    const opsSeen = new Set<number>();
    for (const r of rows) {
      expect(Object.keys(r)).toEqual(["input", "answer", "ops"]);
      expect(r.input[0]).toBe("<bos>");
      expect(r.input[1]).toBe(`<len_${r.ops}>`);
      expect(r.input.at(-1)).toBe("<ans>");
      expect(r.ops >= 1 && r.ops <= 6).toBe(true);
      const expr = r.input.slice(2, -1);
      expect(expr.filter((s: string) => "+-*".includes(s)).length).toBe(r.ops);
      expect(r.answer).toBe(String(evalMano(expr)));
      opsSeen.add(r.ops);
    }
    expect([...opsSeen].sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("is deterministic in the seed", async () => {
    const a = await run("sample", "mano", "--max-ops", "24", "--count", "20", "--seed", "9");
    expect(await run("sample", "mano", "--max-ops", "24", "--count", "20", "--seed", "9")).toBe(a);
    expect(
      await run("sample", "mano", "--max-ops", "24", "--count", "20", "--seed", "10"),
    ).not.toBe(a);
  });

  it("rejects bad values with a message naming the option", async () => {
    await expect(run("sample", "mano", "--max-ops", "0")).rejects.toThrow(
      new CliError("--max-ops must be ≥ 1, got 0"),
    );
    await expect(run("sample", "mano", "--count", "0")).rejects.toThrow(/--count must be ≥ 1/);
    await expect(run("sample", "mano", "--seed", "-1")).rejects.toThrow(/--seed must be ≥ 0/);
    await expect(run("sample", "mano", "--seed", "4294967296")).rejects.toThrow(/--seed must be ≤/);
    await expect(run("sample", "mano", "--max-ops", "x")).rejects.toThrow(
      /--max-ops must be an integer/,
    );
  });
});

describe("looplm sample phop", () => {
  it("prints examples whose answers a hop follower confirms", async () => {
    for (const [A, n, p] of [
      [4, 256, 16],
      [4, 256, 32],
      [2, 20, 18],
      [6, 64, 5],
    ] as const) {
      const out = await run(
        "sample",
        "phop",
        "--alphabet",
        String(A),
        "--length",
        String(n),
        "--hops",
        String(p),
        "--count",
        "50",
        "--seed",
        "2",
      );
      const rows = lines(out);
      expect(rows.length).toBe(50);
      const letters = "abcdefghijklmnopqrstuvwxyz".slice(0, A).split("");
      for (const r of rows) {
        expect(Object.keys(r)).toEqual(["input", "answer", "hops"]);
        expect(r.hops).toBe(p);
        expect(r.input.length).toBe(n);
        expect(r.input.every((s: string) => letters.includes(s))).toBe(true);
        expect(r.input.some((s: string, i: number) => i > 0 && s === r.input[i - 1])).toBe(false);
        expect(followHops(r.input, p)).toBe(r.answer);
      }
    }
  });

  it("rejects bad values with a message naming the option", async () => {
    await expect(run("sample", "phop", "--alphabet", "1")).rejects.toThrow(
      /--alphabet must be ≥ 2, got 1/,
    );
    await expect(run("sample", "phop", "--hops", "0")).rejects.toThrow(/--hops must be ≥ 1, got 0/);
    await expect(run("sample", "phop", "--length", "10", "--hops", "9")).rejects.toThrow(
      /--length must be ≥ --hops \+ 2 = 11 for a defined answer, got 10/,
    );
    await expect(run("sample", "phop", "--count", "0")).rejects.toThrow(/--count must be ≥ 1/);
    await expect(
      run("sample", "phop", "--alphabet", "20", "--length", "12", "--hops", "10", "--count", "1"),
    ).rejects.toThrow(/--hops 10 \/ --length 12: .*no sequence with a defined answer/);
  });

  it("has --help with examples", async () => {
    let help = "";
    const spy = vi.spyOn(process.stdout, "write").mockImplementation((c: string | Uint8Array) => {
      help += String(c);
      return true;
    });
    await expect(
      buildProgram().parseAsync(["node", "looplm", "sample", "phop", "--help"]),
    ).rejects.toThrow();
    spy.mockRestore();
    expect(help).toContain("--hops <p>");
    expect(help).toContain("Examples:");
    expect(help).toContain("looplm sample phop --alphabet 4");
  });
});
