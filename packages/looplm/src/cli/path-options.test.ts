/** Every option or argument that names a path refuses an empty value, whatever its extension. */
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { refuseEmptyPathsBeforeActions } from "./path-options.js";

/** A program with path options of each placeholder shape; resolves to what the action saw. */
async function parse(...args: string[]): Promise<Record<string, unknown>> {
  let seen: Record<string, unknown> = {};
  const program = new Command().exitOverride();
  refuseEmptyPathsBeforeActions(program);
  program
    .command("x")
    .argument("[dir]", "a folder")
    .option("--out <dir>", "a folder")
    .option("--mc <file.jsonl>", "a JSONL file")
    .option("--corpus <name|path>", "a name or a path")
    .option("--text <string>", "not a path")
    .action((_dir, o: Record<string, unknown>) => {
      seen = o;
    });
  await program.parseAsync(["node", "p", "x", ...args]);
  return seen;
}

describe("empty path values", () => {
  it("are refused by option name, whatever the placeholder's shape", async () => {
    await expect(parse("--out", "")).rejects.toThrow("--out must name a folder, got an empty path");
    await expect(parse("--mc", "")).rejects.toThrow("--mc must name a file, got an empty path");
    await expect(parse("--corpus", " ")).rejects.toThrow(
      "--corpus must name a file, got an empty path",
    );
    await expect(parse("")).rejects.toThrow("<dir> must name a folder, got an empty path");
  });

  it("leave other values and other options alone", async () => {
    expect(await parse("--mc", "a.jsonl", "--text", "")).toEqual({ mc: "a.jsonl", text: "" });
  });
});
