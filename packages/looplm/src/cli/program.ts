/**
 * The `looplm` command line: one commander program, one file per command under commands/.
 * Errors from bad input surface as `CliError` (or any Error) and are printed as one line.
 */
import { Command } from "commander";
import pkg from "../../package.json" with { type: "json" };
import { registerCommands } from "./commands/index.js";

export function buildProgram(): Command {
  const program = new Command("looplm")
    .description(
      "Looped language models (N⊗R Mamba-2, hybrid and Transformer backbones) with exit gates",
    )
    .version(pkg.version, "-v, --version")
    .configureHelp({ sortSubcommands: true })
    .exitOverride();
  registerCommands(program);
  return program;
}
