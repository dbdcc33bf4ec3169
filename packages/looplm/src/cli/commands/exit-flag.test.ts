import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EvalFile } from "@loop/eval";
import { saveCheckpoint } from "@loop/looped/node";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { CliError } from "../errors.js";
import { run } from "../run-in-process.test-util.js";
import { saveGatedRun, tinyModel } from "./tiny-gated-model.test-util.js";

let runDir: string;
let plainDir: string;

beforeAll(() => {
  const root = mkdtempSync(join(tmpdir(), "looplm-exit-"));
  runDir = join(root, "mano-run");
  saveGatedRun(runDir);
  plainDir = join(root, "plain");
  saveCheckpoint(plainDir, tinyModel(32, false));
});

afterEach(() => vi.restoreAllMocks());

describe("--exit", () => {
  it("eval scores every rule beside the steps and the gate, in eval.json and the summary", async () => {
    const { out } = await run(
      "eval",
      "--model",
      join(runDir, "final"),
      "--count",
      "8",
      "--batch-size",
      "4",
      "--q",
      "0.5",
      "--exit",
      "fixed:2,gate:0.5,confidence:0.2,entropy:3,state-change:0.2,agree:1,oracle",
    );
    const ev = JSON.parse(readFileSync(join(runDir, "eval.json"), "utf8")) as EvalFile;
    const exits = ev.exits!;
    expect(exits.map((e) => e.rule)).toEqual([
      "fixed:2",
      "gate:0.5",
      "confidence:0.2",
      "entropy:3",
      "state-change:0.2",
      "agree:1",
      "oracle",
    ]);
    expect(exits[0]!.value).toBe(ev.per_step[1]);
    expect(exits[0]!.mean_step).toBe(2);
    expect(exits[1]!.value).toBe(ev.gated[0]!.value);
    expect(exits[1]!.histogram).toEqual(ev.gated[0]!.histogram);
    expect(exits[6]!.realisable).toBe(false);
    expect(exits[6]!.value).toBeGreaterThanOrEqual(Math.max(...ev.per_step));
    for (const e of exits)
      expect(e.histogram.reduce((a, b) => a + b, 0)).toBe(exits[0]!.histogram[1]);
    expect(out).toMatch(/exit rule +mean exit step +Accuracy/);
    expect(out).toContain("oracle (not realisable)");
  });

  it("generate decodes under a rule and says where the tokens exited", async () => {
    const { out, err } = await run(
      "generate",
      "--model",
      join(runDir, "final"),
      "--tokens",
      "1,2,3",
      "--max-new",
      "3",
      "--temperature",
      "0",
      "--exit",
      "entropy:3.3",
    );
    expect(out.trim().split(" ")).toHaveLength(3);
    expect(err).toMatch(
      /^--exit entropy:3\.3: mean exit step \d\.\d\d of 3 over 5 tokens fed \(\d+ of 15 layer applications run\)$/m,
    );
  });

  it("bad rules and rules a command cannot run are one-line CliErrors naming the flag", async () => {
    const evalArgs = ["eval", "--model", join(runDir, "final"), "--count", "4"];
    const plain = ["eval", "--model", plainDir, "--task", "mano", "--max-ops", "2", "--count", "4"];
    const gen = ["generate", "--model", join(runDir, "final"), "--tokens", "1", "--max-new", "1"];
    const cases: [string[], string][] = [
      [[...evalArgs, "--exit", "stop:1"], '--exit: exit rule "stop:1": unknown rule "stop"'],
      [[...evalArgs, "--exit", "gate:2"], '--exit: exit rule "gate:2": q must be in [0, 1], got 2'],
      [[...evalArgs, "--exit", "entropy:x"], '"x" is not a number'],
      [[...evalArgs, "--exit", ","], '--exit: exit rules ",": none given'],
      [
        [...evalArgs, "--exit", "fixed:4"],
        "--exit: fixed:4: the step must be an integer in [1, 3] (the model has 3 loop steps)",
      ],
      [[...plain, "--exit", "gate:0.5"], "--exit gate:0.5 needs a model with an exit gate"],
      [
        [...gen, "--exit", "oracle"],
        "--exit oracle is not realisable (it reads the target): it runs in looplm eval only",
      ],
      [[...gen, "--exit", "agree:1,entropy:1"], "--exit takes one rule for generate, got 2"],
    ];
    for (const [args, msg] of cases) {
      const e = await run(...args).catch((x) => x);
      expect(e, args.join(" ")).toBeInstanceOf(CliError);
      expect((e as Error).message, args.join(" ")).toContain(msg);
      expect((e as Error).message).not.toContain("\n");
    }
  });
});
