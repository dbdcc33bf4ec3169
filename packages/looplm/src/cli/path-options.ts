/*
 * An empty path names nothing: `--out ''` would otherwise mean the current folder (a run trained
 * into it) and `--model ''` would read whatever lies there. Every option or argument whose value
 * is a path (its placeholder says <dir>, <file> or <path>, alone or as one choice, a file maybe
 * with its extension) is refused when empty, before any command runs.
 */
import type { Command } from "commander";
import { CliError } from "./errors.js";

// (<file.jsonl> and <file.lst> name a file too)
const PATH_PLACEHOLDER = /<(?:[^>|]*\|)*(dir|file|path)(?:\.[\w.]+)?(?:\|[^>]*)?>/;

/** Throw a CliError naming the first path option or argument of `cmd` given as an empty string. */
export function refuseEmptyPaths(cmd: Command): void {
  const opts = cmd.opts() as Record<string, unknown>;
  for (const o of cmd.options) {
    const m = PATH_PLACEHOLDER.exec(o.flags);
    const v = opts[o.attributeName()];
    if (m && typeof v === "string" && v.trim() === "")
      throw new CliError(
        `${o.long ?? o.flags} must name a ${folderOrFile(m[1]!)}, got an empty path`,
      );
  }
  cmd.registeredArguments.forEach((a, i) => {
    const v = cmd.processedArgs[i];
    if (PATH_PLACEHOLDER.test(`<${a.name()}>`) && typeof v === "string" && v.trim() === "")
      throw new CliError(`<${a.name()}> must name a ${folderOrFile(a.name())}, got an empty path`);
  });
}

function folderOrFile(placeholder: string): string {
  return placeholder === "dir" ? "folder" : "file";
}

/** Install the check on `program`: it runs for whichever subcommand's action is about to run. */
export function refuseEmptyPathsBeforeActions(program: Command): void {
  program.hook("preAction", (_program, actionCommand) => refuseEmptyPaths(actionCommand));
}
