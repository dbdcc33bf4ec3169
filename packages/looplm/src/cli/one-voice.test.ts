import { type Command, CommanderError } from "commander";
import { describe, expect, it } from "vitest";
import { isRequired } from "./one-voice.js";
import { buildProgram } from "./program.js";
import { capture } from "./run-in-process.test-util.js";

/** Every command and subcommand, with the words that invoke it (`["tokenizer", "encode"]`). */
function commands(cmd: Command, path: string[] = []): [string[], Command][] {
  return cmd.commands
    .filter((c) => c.name() !== "help")
    .flatMap((c) => {
      const p = [...path, c.name()];
      return c.commands.length > 0 ? commands(c, p) : [[p, c] as [string[], Command]];
    });
}

/** A value each required option accepts at parse time (its parser may check the form). */
const VALUE: Record<string, string> = {
  "--loops": "1,2",
  "--protocol": "iso-param",
  "--queue": "redis://localhost:6379",
  "--task": "mano",
};

/** The flags that satisfy every required option and argument of `cmd`. */
function requiredArgs(cmd: Command): string[] {
  return [
    ...cmd.options.filter(isRequired).flatMap((o) => [o.long!, VALUE[o.long!] ?? "x"]),
    ...cmd.registeredArguments.filter((a) => a.required).map(() => "x"),
  ];
}

/** The one line `looplm <args>` writes on stderr as it fails (checked to be one line). */
async function failure(args: string[]): Promise<string> {
  const r = await capture(...args);
  expect(r.error, `looplm ${args.join(" ")} should fail`).toBeInstanceOf(CommanderError);
  expect(r.err.endsWith("\n") && r.err.split("\n").length).toBe(2);
  return r.err.trimEnd();
}

const all = commands(buildProgram());

describe("every command speaks with one voice", () => {
  it("reaches every command, nested ones included", () => {
    const names = all.map(([p]) => p.join(" "));
    expect(names).toContain("train");
    expect(names).toContain("tokenizer encode");
    expect(names).toContain("sample mano");
    expect(names.length).toBeGreaterThan(14);
  });

  for (const [path, cmd] of all) {
    const name = path.join(" ");
    it(`${name}: an unknown flag is one line naming it and the help`, async () => {
      const line = await failure([...path, ...requiredArgs(cmd), "--no-such-flag"]);
      expect(line).toBe(
        `looplm: ${name} has no option --no-such-flag; \`looplm ${name} --help\` lists its options`,
      );
    });

    it(`${name}: --help marks each required option, and a missing one is one line`, async () => {
      const { out, error } = await capture(...path, "--help");
      // (commander ends --help by throwing its exit, the help written)
      expect((error as CommanderError).code).toBe("commander.helpDisplayed");
      for (const o of cmd.options.filter(isRequired)) {
        expect(out).toMatch(new RegExp(`${o.flags.replace(/[<>|]/g, ".")} +\\(required\\)`));
        const others = cmd.options.filter((p) => isRequired(p) && p !== o);
        const args = [...path, ...others.flatMap((p) => [p.long!, VALUE[p.long!] ?? "x"])];
        expect(await failure(args)).toMatch(
          new RegExp(`^looplm: ${name} needs ${o.flags}: .+; see \`looplm ${name} --help\`$`),
        );
      }
      const hidden = (cmd as unknown as { _hidden: boolean })._hidden;
      if (cmd.options.some(isRequired) && !hidden) expect(out).toMatch(/\nExamples?\b/);
    });
  }
});

describe("commander's other parse errors", () => {
  it("an unknown command names the commands there are, with commander's suggestion", async () => {
    expect(await failure(["trian"])).toMatch(
      /^looplm: there is no command "trian"; did you mean train\? commands: check, .*worker$/,
    );
    expect(await failure(["tokenizer", "encdoe"])).toBe(
      'looplm: tokenizer has no command "encdoe"; did you mean encode? commands: train, encode, decode',
    );
  });

  it("a typo of a required option is named before the option it misses", async () => {
    expect(await failure(["train", "--task", "mano", "--ot", "runs/x"])).toBe(
      "looplm: train has no option --ot; did you mean --out? `looplm train --help` lists its options",
    );
  });

  it("an option without its value, or arguments too many or too few", async () => {
    expect(await failure(["train", "--out", "x", "--steps"])).toBe(
      "looplm: --steps needs a value: --steps <n>",
    );
    expect(await failure(["report", "a", "b"])).toBe(
      'looplm: report takes only <dir>, got also "b"; options start with --, and `looplm report --help` lists them',
    );
    expect(await failure(["report"])).toBe(
      "looplm: report needs <dir>: run folder or sweep folder; see `looplm report --help`",
    );
  });
});
