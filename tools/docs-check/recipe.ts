/**
 * docs/cli.md's recipe runs as written: every `looplm …` line of its `sh` blocks, in order, in an
 * empty folder (the CLI from source, as `pnpm looplm` runs it), must exit 0, and every file or
 * folder under `runs/` the page names must be there afterwards. The commands run in one child
 * process (checkRecipeInBackground), so that they train while docs:check does the rest.
 */
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Problem } from "./commands.js";
import { mdBlocks, mdLines } from "./markdown.js";

/** The page whose commands run. */
export const RECIPE = "docs/cli.md";

/** The words of a shell command line: quotes removed, a `# comment` dropped. */
export function shellWords(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/"([^"]*)"|'([^']*)'|(#.*$)|(\S+)/g)) {
    if (m[3] !== undefined) break;
    out.push(m[1] ?? m[2] ?? m[4]!);
  }
  return out;
}

/** The `looplm …` lines of the page's `sh` blocks, with their 1-based line numbers. */
export function recipeCommands(markdown: string): { line: number; args: string[] }[] {
  return mdBlocks(mdLines(markdown))
    .filter((b) => b.lang === "sh")
    .flatMap((b) =>
      b.lines
        .map((text, i) => ({ line: b.start + 1 + i, words: shellWords(text) }))
        .filter((c) => c.words[0] === "looplm")
        .map((c) => ({ line: c.line, args: c.words.slice(1) })),
    );
}

/** The `runs/…` paths the page names in inline code (what the recipe must leave behind). */
export function namedOutputs(markdown: string): string[] {
  const paths = [...markdown.matchAll(/`(runs\/[^`\s]+)`/g)].map((m) => m[1]!);
  return [...new Set(paths)];
}

/**
 * Run the recipe of `page` (relative to `root`, or absolute) now with `root`'s CLI; its problems
 * (none when it runs as written).
 */
export function checkRecipe(root: string, page = RECIPE): Problem[] {
  const markdown = readFileSync(resolve(root, page), "utf8");
  const commands = recipeCommands(markdown);
  if (commands.length === 0) return [{ file: page, line: 1, message: "no looplm command to run" }];
  const main = join(root, "packages/looplm/src/cli/main.ts");
  const tsx = fileURLToPath(import.meta.resolve("tsx"));
  const dir = mkdtempSync(join(tmpdir(), "looplm-recipe-"));
  try {
    for (const c of commands) {
      const r = spawnSync(
        process.execPath,
        ["--import", tsx, "--conditions=@loop/source", main, ...c.args],
        { cwd: dir, encoding: "utf8", timeout: 300_000 },
      );
      if (r.status !== 0) {
        const why = (r.stderr ?? "").trim().split("\n").at(-1) || (r.error?.message ?? "");
        return [
          {
            file: page,
            line: c.line,
            message: `"looplm ${c.args.join(" ")}" failed (exit ${r.status ?? r.signal}): ${why}`,
          },
        ];
      }
    }
    return namedOutputs(markdown)
      .filter((p) => !existsSync(join(dir, p)))
      .map((p) => ({
        file: page,
        line: markdown.split("\n").findIndex((l) => l.includes(`\`${p}\``)) + 1,
        message: `names ${p}, which its commands did not write`,
      }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** checkRecipe in a child process: resolves to its problems while this process works on. */
export function checkRecipeInBackground(root: string): Promise<Problem[]> {
  const tsx = fileURLToPath(import.meta.resolve("tsx"));
  const runner = join(root, "tools/docs-check/recipe-main.ts");
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", tsx, runner, root],
      { encoding: "utf8", maxBuffer: 1 << 24 },
      (err, stdout, stderr) => {
        try {
          resolve(JSON.parse(stdout) as Problem[]);
        } catch {
          const why = stderr.trim().split("\n").at(-1) ?? err?.message ?? "no output";
          resolve([{ file: RECIPE, line: 1, message: `the recipe's runner failed: ${why}` }]);
        }
      },
    );
  });
}
