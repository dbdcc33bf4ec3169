import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { checkDocs, documents, formatProblem, SOURCES } from "./check.js";
import { arxivIds, OPENING_LINES, SEED_PAPER } from "./citation.js";
import { docFigures, proseFigures } from "./figures.js";
import { mdLines } from "./markdown.js";
import { checkRecipe, namedOutputs, RECIPE, recipeCommands, shellWords } from "./recipe.js";
import { PAGE, pageText, SCREENSHOT, SCREENSHOT_TEXT } from "./screenshot.js";
import { findSnippet, runSnippet } from "./snippet.js";
import { holds, sourceSections } from "./sources.js";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const temps: string[] = [];
afterEach(() => {
  for (const t of temps.splice(0)) rmSync(t, { recursive: true, force: true });
});

/** The files docs:check reads, copied into a fresh folder. */
function copyDocs(): string {
  const dir = mkdtempSync(join(tmpdir(), "docs-check-"));
  temps.push(dir);
  const citation = ["CITATION.cff", "packages/looplm/package.json"];
  const shot = [SCREENSHOT, SCREENSHOT_TEXT, PAGE];
  for (const f of [
    ...documents(REPO),
    ...SOURCES,
    ".ci/run",
    "package.json",
    ...citation,
    ...shot,
  ]) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    cpSync(join(REPO, f), join(dir, f));
  }
  return dir;
}

function edit(dir: string, file: string, change: (text: string) => string): void {
  const path = join(dir, file);
  const before = readFileSync(path, "utf8");
  const after = change(before);
  expect(after).not.toBe(before);
  writeFileSync(path, after);
}

const messages = (dir: string) => checkDocs(dir, { snippet: false }).map(formatProblem);

describe("docs:check on the committed docs", () => {
  it("finds every README figure, printed block and command", () => {
    expect(messages(copyDocs())).toEqual([]);
  });

  it("fails on a README figure edited by hand, naming file, line and figure", () => {
    const dir = copyDocs();
    const readme = readFileSync(join(dir, "README.md"), "utf8");
    const ratio = docFigures(mdLines(readme)).find((f) => f.unit === "×");
    expect(ratio).toBeDefined();
    const line = readme.split("\n")[ratio!.line - 1]!;
    const edited = ratio!.text.replace(/\d+(\.\d+)?/, "97.3");
    edit(dir, "README.md", (t) => t.replace(line, line.replace(ratio!.text, edited)));
    expect(messages(dir)).toEqual([
      `README.md:${ratio!.line}: figure "${edited}" is not in benchmarks/RESULTS.md or docs/results.md under a heading that names its command and commit`,
    ]);
  });

  it("fails on a figure added to a package README without a run", () => {
    const dir = copyDocs();
    const file = "packages/attention/README.md";
    const n = readFileSync(join(dir, file), "utf8").split("\n").length;
    edit(dir, file, (t) => `${t.replace(/\n$/, "")}\nThe kernel is 3.17× faster than PyTorch.\n`);
    expect(messages(dir)).toEqual([
      `${file}:${n}: figure "3.17×" is not in benchmarks/RESULTS.md or docs/results.md under a heading that names its command and commit`,
    ]);
  });

  it("fails on an edited line of the default experiment's printed table", () => {
    const dir = copyDocs();
    edit(dir, "README.md", (t) =>
      t.replace(/(1⊗4 {4}looped .* )\d+\.\d+ %/, (_, row: string) => `${row}99.99 %`),
    );
    expect(messages(dir)).toEqual([
      expect.stringMatching(/^README\.md:\d+: this printed output is not found line for line in/),
    ]);
  });

  it("fails when the README's test command is not .ci/run's", () => {
    const dir = copyDocs();
    edit(dir, "README.md", (t) => t.replace("--frozen-lockfile && pnpm test", "&& pnpm test"));
    expect(messages(dir)).toEqual([
      expect.stringMatching(/^README\.md:\d+: the test command ".*" is not the one \.ci\/run runs/),
    ]);
  });

  it("fails when pnpm test stops running docs:check", () => {
    const dir = copyDocs();
    edit(dir, "package.json", (t) => t.replace("pnpm run docs:check && ", ""));
    expect(messages(dir)).toEqual(["package.json:1: scripts.test does not run docs:check"]);
  });
});

describe("the paper cited, and looplm citable", () => {
  it("fails when README.md stops citing the paper in its opening lines", () => {
    const dir = copyDocs();
    edit(dir, "README.md", (t) =>
      t.replace("[arXiv:2607.10110](https://arxiv.org/abs/2607.10110)", "an arXiv preprint"),
    );
    expect(messages(dir)).toEqual([
      `README.md:1: the first ${OPENING_LINES} lines do not cite the paper looplm reproduces ("${SEED_PAPER.title}", arXiv:${SEED_PAPER.arxiv})`,
    ]);
  });

  it("fails when CITATION.cff is missing, or its version or licence is not looplm's", () => {
    const dir = copyDocs();
    edit(dir, "CITATION.cff", (t) =>
      t.replace(/^version: .*$/m, "version: 0.0.9").replace(/^license: .*$/m, "license: MIT"),
    );
    expect(messages(dir)).toEqual([
      expect.stringMatching(
        /^CITATION\.cff:\d+: version is "0\.0\.9", not looplm's \S+ \(packages\/looplm\/package\.json\)$/,
      ),
      expect.stringMatching(/^CITATION\.cff:\d+: license is "MIT", not looplm's Apache-2\.0$/),
    ]);
    rmSync(join(dir, "CITATION.cff"));
    expect(messages(dir)).toEqual([
      "CITATION.cff:1: missing: how to cite looplm (GitHub's CITATION.cff)",
    ]);
  });

  it("fails when a doc cites a paper by arXiv id that CITATION.cff does not list", () => {
    const dir = copyDocs();
    const file = "packages/attention/README.md";
    const n = readFileSync(join(dir, file), "utf8").split("\n").length;
    edit(
      dir,
      file,
      (t) =>
        `${t.replace(/\n$/, "")}\nRoPE: [arXiv:2104.09864](https://arxiv.org/abs/2104.09864).\n`,
    );
    expect(messages(dir)).toEqual([
      `${file}:${n}: cites arXiv:2104.09864, which CITATION.cff's references do not list`,
    ]);
  });

  it("reads arXiv ids from links and text, and never as figures", () => {
    expect(
      arxivIds("[arXiv:2510.25741](https://arxiv.org/abs/2510.25741), arXiv: 2405.21060"),
    ).toEqual(["2510.25741", "2405.21060"]);
    expect(proseFigures("Ouro (arXiv:2510.25741) reaches 78.0 %", 1).map((f) => f.text)).toEqual([
      "78.0 %",
    ]);
  });
});

describe("the playground's screenshot", () => {
  it("reads a page's visible text, one line per block", () => {
    expect(
      pageText(
        "<html><head><style>p{}</style><script>x()</script></head><body><!-- c --><h1>looplm\n  playground</h1><p>a &amp; b<b>c</b></p></body></html>",
      ),
    ).toBe("looplm playground\na & b\nc");
  });

  it("fails when the page's text is no longer the one the screenshot shows", () => {
    const dir = copyDocs();
    edit(dir, PAGE, (t) => t.replace("<h1>looplm playground</h1>", "<h1>looplm lab</h1>"));
    expect(messages(dir)).toEqual([
      expect.stringMatching(
        /^docs\/playground\.png:1: shows an older packages\/playground\/index\.html: its text differs from docs\/playground\.txt at line 2 \("looplm lab" now, "looplm playground" shown\); retake it with `pnpm --filter @loop\/playground screenshot`$/,
      ),
    ]);
  });
});

describe("docs/cli.md's recipe", () => {
  it("is four commands, train to report, whose outputs the page names", () => {
    const page = readFileSync(join(REPO, RECIPE), "utf8");
    const commands = recipeCommands(page);
    expect(commands.map((c) => c.args[0])).toEqual(["train", "eval", "generate", "report"]);
    for (const c of commands) expect(page.split("\n")[c.line - 1]).toMatch(/^looplm /);
    expect(namedOutputs(page)).toContain("runs/lm-char/report.html");
    expect(shellWords(`looplm generate --prompt "Fellow citizens" --seed 1  # a comment`)).toEqual([
      "looplm",
      "generate",
      "--prompt",
      "Fellow citizens",
      "--seed",
      "1",
    ]);
  });

  it("fails on a command that does not run as written, naming its line", () => {
    const dir = mkdtempSync(join(tmpdir(), "docs-recipe-"));
    temps.push(dir);
    const page = join(dir, "cli.md");
    writeFileSync(page, "# x\n\n```sh\nlooplm train --task phop --stpes 3 --out runs/x\n```\n");
    expect(checkRecipe(REPO, page).map(formatProblem)).toEqual([
      `${page}:4: "looplm train --task phop --stpes 3 --out runs/x" failed (exit 1): looplm: train has no option --stpes; did you mean --steps? \`looplm train --help\` lists its options`,
    ]);
  });
});

describe("what counts as a figure", () => {
  const keys = (text: string) => proseFigures(text, 1).map((f) => `${f.key}${f.unit}`);

  it("reads ratios, shares, times, spreads and decimals", () => {
    expect(keys("runs 2.3–6.1× faster, 70.77 ± 0.74 % vs 47 %, 21 s and 1.7 minutes")).toEqual([
      "2.3–6.1×",
      "70.77±0.74%",
      "47%",
      "21s",
      "1.7min",
    ]);
    expect(keys("perplexity 25.8 vs 24.0; 190 GFLOP/s")).toEqual(["25.8", "24.0", "190GFLOP/s"]);
  });

  it("skips shapes, versions, exponents and words that start with a unit letter", () => {
    expect(keys("shape 32×256, 96 × 96 tiles, Node 20.20, PyTorch 1.13, v1.2.3, 2.5e-4")).toEqual(
      [],
    );
    expect(keys("15 steps of 8 sequences, 3 hops")).toEqual([]);
  });

  it("skips a line marked as a definition, and only that line", () => {
    const lines = mdLines(
      "holds out 5 % of the documents <!-- docs-check: not a measurement -->\nand is 2.5× faster\n",
    );
    expect(docFigures(lines).map((f) => `${f.line}:${f.text}`)).toEqual(["2:2.5×"]);
  });

  it("reads decimal and unit cells of tables, not counts", () => {
    const lines = mdLines("| a | b | c | d |\n|---|--:|--:|--:|\n| x | 12 | 4.55 | 31 ms |\n");
    expect(docFigures(lines).map((f) => `${f.line}:${f.key}${f.unit}`)).toEqual([
      "3:4.55",
      "3:31ms",
    ]);
  });
});

describe("where a figure may come from", () => {
  const figure = proseFigures("4.55×", 1)[0]!;
  /** Whether a section of the markdown `text` backs the figure. */
  const backed = (text: string) => sourceSections("R.md", text).some((s) => holds(s, figure));

  it("a section naming its command and its commit, itself or through its heading", () => {
    expect(
      backed("## Run (commit abc1234)\n\n### Ratios (`pnpm bench model`)\n\nours/torch 4.55×\n"),
    ).toBe(true);
  });

  it("not a section without a commit, nor one without a command", () => {
    for (const text of [
      "## Run (`pnpm bench model`)\n\nours/torch 4.55×\n",
      "## Run (commit abc1234)\n\nours/torch 4.55×\n",
    ])
      expect(backed(text)).toBe(false);
  });

  it("not a longer number that contains it, nor a bare table cell for a ratio", () => {
    const text =
      "## Run (`pnpm bench model`, commit abc1234)\n\n14.55× and 4.551×\n\n```\nratio 4.55\n```\n";
    expect(backed(text)).toBe(false);
  });
});

describe("the library snippet", () => {
  const readme = (code: string, shown: string) =>
    `# x\n\n\`\`\`ts\n${code}\n\`\`\`\n\nIt prints:\n\n\`\`\`\n${shown}\n\`\`\`\n`;

  it("passes when it prints the block after it, and names the first differing line", () => {
    const code = 'console.log("loop step 1: 33.6 %");\nconsole.log("loop step 2: 45.7 %");';
    const good = findSnippet(readme(code, "loop step 1: 33.6 %\nloop step 2: 45.7 %"));
    const bad = findSnippet(readme(code, "loop step 1: 33.6 %\nloop step 2: 45.8 %"));
    if (!("code" in good) || !("code" in bad)) throw new Error("snippet not found");
    expect(runSnippet(good, 60_000)).toEqual([]);
    expect(runSnippet(bad, 60_000).map(formatProblem)).toEqual([
      'README.md:12: the library snippet printed "loop step 2: 45.7 %" where the README shows "loop step 2: 45.8 %"',
    ]);
  });

  it("reports a snippet that throws", () => {
    const s = findSnippet(readme('throw new Error("boom");', ""));
    if (!("code" in s)) throw new Error("snippet not found");
    expect(runSnippet(s, 60_000).map(formatProblem)).toEqual([
      expect.stringMatching(/^README\.md:3: the library snippet failed \(exit 1\): .*boom/s),
    ]);
  });
});
