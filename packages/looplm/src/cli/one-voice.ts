/*
 * One voice on the command line: commander's own parse errors (unknown option or command, missing
 * or valueless option, too many arguments) become the one line `looplm: <what is wrong>; <fix>`
 * that every other failure prints, and `--help` marks the options a command cannot run without.
 * Commander builds every subcommand through `createCommand`, so this class reaches all of them.
 */
import { Command, Help, type Option } from "commander";

/** A commander `Command` whose parse errors read like every other `looplm` error. */
export class LooplmCommand extends Command {
  override createCommand(name?: string): LooplmCommand {
    return new LooplmCommand(name);
  }

  override error(message: string, errorOptions?: { code?: string; exitCode?: number }): never {
    // Commander checks required options before unknown ones, but `--ot x` is most likely a typo
    // of the required `--out`: name the typo (with commander's suggestion) first.
    const typo = this.args.find((a) => a.length > 1 && a.startsWith("-"));
    if (errorOptions?.code === "commander.missingMandatoryOptionValue" && typo !== undefined)
      (this as unknown as { unknownOption(flag: string): never }).unknownOption(typo);
    return super.error(
      `looplm: ${parseErrorLine(this, message, errorOptions?.code)}`,
      errorOptions,
    );
  }
}

/** `looplm train`, `looplm tokenizer encode`: how the user typed `cmd`. */
function typed(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/** `train`, `tokenizer encode`: the command's name after `looplm: `, or "" for the program. */
function subject(cmd: Command): string {
  return typed(cmd).split(" ").slice(1).join(" ");
}

/** Commander's `(Did you mean --steps?)` line as a clause, or "". */
function suggestion(message: string): string {
  const m = /\(Did you mean (.*)\?\)/.exec(message);
  return m ? `did you mean ${m[1]}? ` : "";
}

function quoted(message: string): string {
  return /'([^']*)'/.exec(message)?.[1] ?? "";
}

function optionByFlags(cmd: Command, flags: string): Option | undefined {
  return cmd.options.find((o) => o.flags === flags);
}

/** What went wrong and how to fix it, in one line, for commander's error `message` with `code`. */
export function parseErrorLine(cmd: Command, message: string, code?: string): string {
  const help = `\`${typed(cmd)} --help\``;
  const who = subject(cmd);
  const has = who ? `${who} has` : "there is";
  switch (code) {
    case "commander.unknownOption":
      return `${has} no option ${quoted(message)}; ${suggestion(message)}${help} lists its options`;
    case "commander.unknownCommand": {
      const names = cmd.commands.filter((c) => !(c as { _hidden?: boolean })._hidden);
      return `${has} no command "${quoted(message)}"; ${suggestion(message)}commands: ${names
        .map((c) => c.name())
        .join(", ")}`;
    }
    case "commander.missingMandatoryOptionValue": {
      const o = optionByFlags(cmd, quoted(message));
      const what = o?.description ? `: ${o.description}` : "";
      return `${who} needs ${quoted(message)}${what}; see ${help}`;
    }
    case "commander.optionMissingArgument": {
      const flags = quoted(message);
      return `${flags.split(/[ ,]/)[0]} needs a value: ${flags.replace(/^-\w, /, "")}`;
    }
    case "commander.missingArgument": {
      const name = quoted(message);
      const a = cmd.registeredArguments.find((r) => r.name() === name);
      const what = a?.description ? `: ${a.description}` : "";
      return `${who} needs <${name}>${what}; see ${help}`;
    }
    case "commander.excessArguments": {
      const want = cmd.registeredArguments.map((a) => `<${a.name()}>`);
      const takes = want.length === 0 ? "no arguments" : `only ${want.join(" ")}`;
      const extra = cmd.args.slice(want.length).map((a) => JSON.stringify(a));
      return `${who} takes ${takes}, got also ${extra.join(" ")}; options start with --, and ${help} lists them`;
    }
    default:
      return message
        .replace(/^error: /, "")
        .split("\n")
        .filter((l) => l !== "")
        .join(" ");
  }
}

/** An option the command cannot run without: mandatory and with no default to fall back on. */
export function isRequired(o: Option): boolean {
  return o.mandatory && o.defaultValue === undefined;
}

/** Help settings shared by every command: required options say so first. */
export const helpSettings: Partial<Help> = {
  sortSubcommands: true,
  optionDescription(this: Help, o: Option): string {
    const d = Help.prototype.optionDescription.call(this, o);
    return isRequired(o) ? `(required) ${d}` : d;
  },
};
