/**
 * docs:check — the READMEs cannot drift from the runs they quote:
 * - every figure of README.md and packages/ * /README.md (figures.ts says what counts) is found in
 *   benchmarks/RESULTS.md or docs/results.md, in a section naming its command and commit;
 * - every printed-output block of README.md (an untyped fence) is found, line for line, in such a
 *   section, except the library snippet's, which is produced by running the snippet;
 * - the "Two commands" are the ones CI runs;
 * - the paper is cited at the top of README.md and docs/results.md, and CITATION.cff holds
 *   looplm's citation and every paper the docs cite (citation.ts);
 * - docs/playground.png shows the playground page as it is (screenshot.ts).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { checkCitation } from "./citation.js";
import { checkCommands, type Problem } from "./commands.js";
import { docFigures } from "./figures.js";
import { mdBlocks, mdLines } from "./markdown.js";
import { checkScreenshot } from "./screenshot.js";
import { findSnippet, runSnippet } from "./snippet.js";
import { findFigure, normaliseText, type SourceSection, sourceSections } from "./sources.js";

export type { Problem };

export const SOURCES = ["benchmarks/RESULTS.md", "docs/results.md"];

export function documents(root: string): string[] {
  const pkgs = existsSync(join(root, "packages"))
    ? readdirSync(join(root, "packages"))
        .sort()
        .map((p) => `packages/${p}/README.md`)
        .filter((f) => existsSync(join(root, f)))
    : [];
  return ["README.md", ...pkgs];
}

export function loadSources(root: string): SourceSection[] {
  return SOURCES.filter((f) => existsSync(join(root, f))).flatMap((f) =>
    sourceSections(f, readFileSync(join(root, f), "utf8")),
  );
}

const WHERE = `${SOURCES.join(" or ")} under a heading that names its command and commit`;

export function checkFigures(root: string, sources = loadSources(root)): Problem[] {
  const problems: Problem[] = [];
  for (const file of documents(root)) {
    for (const f of docFigures(mdLines(readFileSync(join(root, file), "utf8")))) {
      if (findFigure(sources, f)) continue;
      problems.push({ file, line: f.line, message: `figure "${f.text}" is not in ${WHERE}` });
    }
  }
  return problems;
}

/** README's printed blocks other than the snippet's: found whole in one source section. */
export function checkOutputs(root: string, sources = loadSources(root)): Problem[] {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const snippet = findSnippet(readme);
  const skip = "output" in snippet ? snippet.output.start : -1;
  const problems: Problem[] = [];
  for (const b of mdBlocks(mdLines(readme))) {
    if (b.lang !== "" || b.start === skip) continue;
    const want = b.lines.map((l) => normaliseText(l).trimEnd());
    const found = sources.some((s) => {
      const have = s.tables.map((l) => l.trimEnd());
      for (let i = 0; i + want.length <= have.length; i++)
        if (want.every((w, j) => have[i + j] === w)) return true;
      return false;
    });
    if (!found)
      problems.push({
        file: "README.md",
        line: b.start,
        message: `this printed output is not found line for line in ${WHERE}`,
      });
  }
  return problems;
}

export interface CheckOptions {
  /** Run the README's library snippet (seconds; off in the checker's own unit tests). */
  snippet?: boolean;
}

export function checkDocs(root: string, opts: CheckOptions = {}): Problem[] {
  const sources = loadSources(root);
  const read = (f: string) => readFileSync(join(root, f), "utf8");
  const problems = [
    ...checkCommands(read("README.md"), read(".ci/run"), read("package.json")),
    ...checkFigures(root, sources),
    ...checkOutputs(root, sources),
    ...checkCitation(root),
    ...checkScreenshot(root),
  ];
  if (opts.snippet !== false) {
    const s = findSnippet(read("README.md"));
    problems.push(...("code" in s ? runSnippet(s) : [s]));
  }
  return problems;
}

export function formatProblem(p: Problem): string {
  return `${p.file}:${p.line}: ${p.message}`;
}
