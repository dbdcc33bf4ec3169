// The programs under `examples/` and the output docs/examples.md shows for each: every
// `examples/*.ts` has exactly one printed-output block there, the untyped fence right after a
// `<!-- output of examples/<name>.ts -->` line, and running the example must print exactly it
// (docs:check runs them from source; tools/pack/packed.test.ts runs them from the tarballs).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Problem } from "../docs-check/commands.js";
import { mdBlocks, mdLines } from "../docs-check/markdown.js";

/** The page that shows each example's output. */
export const EXAMPLES_DOC = "docs/examples.md";

/** One example's output as docs/examples.md shows it. */
export interface ShownOutput {
  /** The example, relative to the repository root (`examples/x.ts`). */
  example: string;
  /** Line of the opening fence in docs/examples.md. */
  line: number;
  lines: string[];
}

/** Every `examples/*.ts`, relative to the root, sorted. */
export function listExamples(root: string): string[] {
  const dir = join(root, "examples");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
    .sort()
    .map((f) => `examples/${f}`);
}

const MARKER = /^<!-- output of (examples\/[\w.-]+\.ts) -->\s*$/;

/**
 * The output blocks of docs/examples.md by example, and a problem for each example without one,
 * each marker not followed by an untyped block, each block of a file that does not exist.
 */
export function shownOutputs(root: string): {
  shown: Map<string, ShownOutput>;
  problems: Problem[];
} {
  const problems: Problem[] = [];
  const shown = new Map<string, ShownOutput>();
  const path = join(root, EXAMPLES_DOC);
  const text = existsSync(path) ? readFileSync(path, "utf8") : "";
  const lines = mdLines(text);
  const blocks = mdBlocks(lines);
  const examples = listExamples(root);
  for (const l of lines) {
    const m = l.fence === undefined ? MARKER.exec(l.text) : null;
    if (!m) continue;
    const example = m[1]!;
    const block = blocks.find((b) => b.start === l.n + 1);
    const fail = (message: string) => problems.push({ file: EXAMPLES_DOC, line: l.n, message });
    if (block?.lang !== "") fail(`no untyped output block right after the ${example} marker`);
    else if (!examples.includes(example)) fail(`${example} does not exist`);
    else if (shown.has(example)) fail(`a second output block for ${example}`);
    else shown.set(example, { example, line: block.start, lines: block.lines });
  }
  for (const e of examples)
    if (!shown.has(e))
      problems.push({
        file: EXAMPLES_DOC,
        line: 1,
        message: `${e} has no output block (add "<!-- output of ${e} -->" and the untyped block it prints)`,
      });
  return { shown, problems };
}

/** Problems where `stdout` differs from the shown block, one per differing line. */
export function compareExampleOutput(shown: ShownOutput, stdout: string, how: string): Problem[] {
  const got = stdout.replace(/\n+$/, "").split("\n");
  const problems: Problem[] = [];
  for (let i = 0; i < Math.max(got.length, shown.lines.length); i++) {
    const g = (got[i] ?? "").trimEnd();
    const w = (shown.lines[i] ?? "").trimEnd();
    if (g === w) continue;
    problems.push({
      file: EXAMPLES_DOC,
      line: shown.line + 1 + i,
      message: `${shown.example} (${how}) printed ${JSON.stringify(got[i] ?? "(nothing)")} where the page shows ${JSON.stringify(shown.lines[i] ?? "(nothing)")}`,
    });
  }
  return problems;
}
