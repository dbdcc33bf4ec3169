/**
 * The README's "Two commands" are what CI runs: the test command is the one `.ci/run` runs
 * (its `test_command='…'`), and the experiment command is the same setup followed by
 * `pnpm start`, which the root package.json maps to `looplm experiment`.
 */
import { mdBlocks, mdLines, mdSections } from "./markdown.js";

export interface Problem {
  file: string;
  line: number;
  message: string;
}

export function checkCommands(readme: string, ciRun: string, packageJson: string): Problem[] {
  const problems: Problem[] = [];
  const fail = (file: string, line: number, message: string) =>
    problems.push({ file, line, message });
  const lines = mdLines(readme);
  const section = mdSections(lines).find((s) => /^Two commands$/i.test(s.heading.trim()));
  if (!section) {
    fail("README.md", 1, 'no "## Two commands" section');
    return problems;
  }
  const blocks = mdBlocks(section.lines).filter((b) => b.lang === "sh");
  const commands = blocks.map((b) => ({ line: b.start + 1, text: b.lines.join("\n").trim() }));
  if (commands.length !== 2) {
    fail("README.md", section.start, `"Two commands" shows ${commands.length} sh blocks, not 2`);
    return problems;
  }
  const m = /^test_command='([^']*)'$/m.exec(ciRun);
  if (!m) {
    fail(".ci/run", 1, "no test_command='…' line");
    return problems;
  }
  const test = m[1]!;
  const [start, tests] = commands as [(typeof commands)[0], (typeof commands)[0]];
  if (tests.text !== test)
    fail(
      "README.md",
      tests.line,
      `the test command "${tests.text}" is not the one .ci/run runs: "${test}"`,
    );
  const setup = test.replace(/\s*&&\s*pnpm test$/, "");
  if (setup === test) fail(".ci/run", 1, `test_command does not end in "&& pnpm test": ${test}`);
  const expected = `${setup} && pnpm start`;
  if (start.text !== expected)
    fail(
      "README.md",
      start.line,
      `the experiment command "${start.text}" is not .ci/run's setup followed by pnpm start: "${expected}"`,
    );
  const scripts = (JSON.parse(packageJson) as { scripts?: Record<string, string> }).scripts ?? {};
  if (!/^pnpm looplm experiment\b/.test(scripts.start ?? ""))
    fail("package.json", 1, `scripts.start is "${scripts.start}", not "pnpm looplm experiment"`);
  if (!/\bdocs:check\b/.test(scripts.test ?? ""))
    fail("package.json", 1, "scripts.test does not run docs:check");
  return problems;
}
