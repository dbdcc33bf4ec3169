/*
 * The examples' output blocks: every `examples/*.ts` needs exactly one on docs/examples.md, and a
 * printed line that differs from the page is named by its page line. (`pnpm docs:check` runs the
 * examples themselves; tools/pack/packed.test.ts runs them from the tarballs.)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compareExampleOutput, listExamples, shownOutputs } from "./examples.js";

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

function repo(examples: string[], page: string): string {
  const root = mkdtempSync(join(tmpdir(), "examples-"));
  temps.push(root);
  mkdirSync(join(root, "examples"));
  mkdirSync(join(root, "docs"));
  for (const e of examples) writeFileSync(join(root, "examples", e), "console.log(1);\n");
  writeFileSync(join(root, "docs", "examples.md"), page);
  return root;
}

describe("examples and docs/examples.md", () => {
  it("finds every example and its block", () => {
    const root = repo(
      ["b.ts", "a.ts"],
      "# E\n\n<!-- output of examples/a.ts -->\n```\none\ntwo\n```\n\n<!-- output of examples/b.ts -->\n```\nthree\n```\n",
    );
    expect(listExamples(root)).toEqual(["examples/a.ts", "examples/b.ts"]);
    const { shown, problems } = shownOutputs(root);
    expect(problems).toEqual([]);
    expect(shown.get("examples/a.ts")).toEqual({
      example: "examples/a.ts",
      line: 4,
      lines: ["one", "two"],
    });
  });

  it("names an example without a block, a block of no example, a marker without a block", () => {
    const root = repo(
      ["a.ts", "new.ts"],
      "<!-- output of examples/a.ts -->\n```\none\n```\n<!-- output of examples/gone.ts -->\n```\nx\n```\n<!-- output of examples/a.ts -->\ntext\n",
    );
    expect(shownOutputs(root).problems.map((p) => `${p.line}: ${p.message}`)).toEqual([
      "5: examples/gone.ts does not exist",
      "9: no untyped output block right after the examples/a.ts marker",
      '1: examples/new.ts has no output block (add "<!-- output of examples/new.ts -->" and the untyped block it prints)',
    ]);
  });

  it("names the page line of a printed line that differs, and a missing line", () => {
    const shown = { example: "examples/a.ts", line: 4, lines: ["one", "two"] };
    expect(compareExampleOutput(shown, "one\ntwo\n", "run")).toEqual([]);
    expect(compareExampleOutput(shown, "one\n2\n", "run").map((p) => p.line)).toEqual([6]);
    expect(compareExampleOutput(shown, "one\n", "run")[0]?.message).toBe(
      'examples/a.ts (run) printed "(nothing)" where the page shows "two"',
    );
  });
});
