/**
 * The README's library snippet (its one ```ts block) is run as written, and what it prints must
 * be the untyped block that follows it, line for line.
 */
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Problem } from "./commands.js";
import { type MdBlock, mdBlocks, mdLines } from "./markdown.js";

/** The repository this tool belongs to: its node_modules resolve the snippet's imports. */
const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export interface Snippet {
  code: MdBlock;
  output: MdBlock;
}

export function findSnippet(readme: string): Snippet | Problem {
  const blocks = mdBlocks(mdLines(readme));
  const ts = blocks.filter((b) => b.lang === "ts");
  if (ts.length !== 1)
    return {
      file: "README.md",
      line: ts[1]?.start ?? 1,
      message: `expected one \`\`\`ts block (the library snippet), found ${ts.length}`,
    };
  const code = ts[0]!;
  const output = blocks.find((b) => b.start > code.start && b.lang === "");
  if (!output)
    return {
      file: "README.md",
      line: code.start,
      message: "the library snippet has no untyped block after it showing its output",
    };
  return { code, output };
}

export function runSnippet(snippet: Snippet, timeoutMs = 300_000): Problem[] {
  const dir = join(REPO, "node_modules", ".cache", "docs-check");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `readme-snippet-${process.pid}.mts`);
  writeFileSync(file, `${snippet.code.lines.join("\n")}\n`);
  const tsx = fileURLToPath(import.meta.resolve("tsx"));
  let r: SpawnSyncReturns<string>;
  try {
    r = spawnSync(process.execPath, ["--import", tsx, "--conditions=@loop/source", file], {
      cwd: REPO,
      encoding: "utf8",
      timeout: timeoutMs,
    });
  } finally {
    rmSync(file, { force: true });
  }
  const where = { file: "README.md", line: snippet.code.start };
  if (r.error || r.status !== 0)
    return [
      {
        ...where,
        message: `the library snippet failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr ?? "").trim().slice(-2000)}`,
      },
    ];
  return compareOutput(snippet.output, r.stdout, r.stderr);
}

export function compareOutput(shown: MdBlock, stdout: string, stderr = ""): Problem[] {
  const got = stdout.replace(/\n+$/, "").split("\n");
  const want = shown.lines;
  const problems: Problem[] = [];
  const n = Math.max(got.length, want.length);
  for (let i = 0; i < n; i++) {
    if ((got[i] ?? "").trimEnd() === (want[i] ?? "").trimEnd()) continue;
    problems.push({
      file: "README.md",
      line: shown.start + 1 + i,
      message: `the library snippet printed ${JSON.stringify(got[i] ?? "(nothing)")} where the README shows ${JSON.stringify(want[i] ?? "(nothing)")}${stderr.trim() ? ` (its stderr: ${stderr.trim().slice(0, 300)})` : ""}`,
    });
  }
  return problems;
}
