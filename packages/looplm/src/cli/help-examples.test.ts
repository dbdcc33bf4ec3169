/**
 * Every example a command's `--help` shows runs as written: it parses (its flags exist, its
 * values are valid, its required options are there), and every model, run or sweep folder it
 * reads is one that an example, or docs/cli.md's recipe, writes, or a file of the repository.
 * The examples are parsed, not run (some train for hours): each command's action is replaced.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { describe, expect, it, vi } from "vitest";
import { buildProgram } from "./program.js";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));

function allCommands(cmd: Command): Command[] {
  return cmd.commands.flatMap((c) => [c, ...allCommands(c)]);
}

function helpOf(cmd: Command): string {
  let s = "";
  cmd.configureOutput({ writeOut: (t) => (s += t) });
  cmd.outputHelp();
  return s;
}

/** The words of a shell command line: quotes removed, a `# comment` dropped. */
function words(line: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(#.*$)|(\S+)/g;
  for (const m of line.matchAll(re)) {
    if (m[3] !== undefined) break;
    out.push(m[1] ?? m[2] ?? m[4]!);
  }
  return out;
}

/** Each `looplm …` of an example line (a pipe may hold two), without redirections. */
function invocations(line: string): string[][] {
  return line
    .split(/\s\|\s/)
    .map((part) => words(part.replace(/\s[<>]\s?\S+/g, "")))
    .filter((w) => w[0] === "looplm")
    .map((w) => w.slice(1));
}

const program = buildProgram();
const examples = allCommands(program)
  .filter((c) => c.name() !== "help")
  .flatMap((c) =>
    helpOf(c)
      .split("\n")
      // (a comment line of its own may name a command too: "# machine: looplm worker …")
      .filter((l) => /^\s+looplm /.test(l) || /^\s+#.*: looplm /.test(l))
      .map((l) => l.trim().replace(/^#.*: (?=looplm )/, ""))
      .flatMap(invocations),
  );
const recipe = [...readFileSync(join(REPO, "docs/cli.md"), "utf8").matchAll(/^looplm .*$/gm)].map(
  (m) => words(m[0]).slice(1),
);

/** The value of `--flag` in `args`, if given. */
const flag = (args: string[], name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

describe("every --help example", () => {
  it("there are examples to check, every command's among them", () => {
    expect(examples.length).toBeGreaterThan(40);
    const shown = new Set(examples.map((e) => e[0]));
    for (const c of program.commands)
      if (c.name() !== "help" && !(c as unknown as { _hidden: boolean })._hidden)
        expect(shown, `looplm ${c.name()} --help shows no example`).toContain(c.name());
  });

  it("parses as written: its flags exist and its values are valid", async () => {
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const failed: string[] = [];
    try {
      for (const args of [...examples, ...recipe]) {
        const dry = buildProgram();
        for (const c of allCommands(dry)) c.action(() => {});
        await dry
          .parseAsync(["node", "looplm", ...args])
          .catch((e: Error) => failed.push(`looplm ${args.join(" ")}: ${e.message}`));
      }
    } finally {
      vi.restoreAllMocks();
    }
    expect(failed).toEqual([]);
  });

  it("reads only folders an example or docs/cli.md writes, or files of the repository", () => {
    const all = [...examples, ...recipe];
    // (a resumed run is written by the command that started it)
    const written = new Set(
      all
        .filter((a) => !a.includes("--resume"))
        .map((a) => flag(a, "--out"))
        .filter((o) => o !== undefined),
    );
    const reads = all.flatMap((a) => {
      // (a --corpus of your own texts is yours to give; the repository's are checked)
      const inputs = ["--model", "--from", "--tokenizer", "--piqa", "--labels"]
        .map((f) => flag(a, f))
        .filter((v): v is string => v !== undefined);
      // `looplm report <dir>` and `train --resume` read the folder they name
      if (a[0] === "report") inputs.push(a[1]!);
      if (a.includes("--resume") && a[0] === "train") inputs.push(flag(a, "--out")!);
      return inputs.map((v) => [v, a.join(" ")] as const);
    });
    const unmet = reads.filter(([v]) => {
      if (["bpe", "char"].includes(v)) return false;
      if (/[<>]/.test(v) || existsSync(join(REPO, v))) return false;
      return !written.has(v.replace(/\/final$/, ""));
    });
    expect(unmet.map(([v, where]) => `${v} (looplm ${where})`)).toEqual([]);
  });
});
