import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EvalFile } from "@loop/eval";
import { flopsPerToken } from "@loop/looped";
import { saveCheckpoint } from "@loop/looped/node";
import { buildCharTokenizer } from "@loop/tasks";
import { testdataPath } from "@loop/test-support";
import { CommanderError } from "commander";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { CliError } from "../errors.js";
import { buildProgram } from "../program.js";
import { saveGatedRun, tinyModel } from "./tiny-gated-model.test-util.js";

/** Run `looplm <args>`, returning stdout; commander's own messages are swallowed. */
async function looplm(...args: string[]): Promise<string> {
  const program = buildProgram();
  for (const c of [program, ...program.commands])
    c.configureOutput({ writeErr: () => {}, writeOut: () => {} });
  let out = "";
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((s) => {
    out += String(s);
    return true;
  });
  try {
    await program.parseAsync(["node", "looplm", ...args]);
  } finally {
    spy.mockRestore();
  }
  return out;
}

/** `looplm eval` of the plain model on a text corpus with the char tokenizer, then `more`. */
const lmEval = (corpus: string, ...more: string[]) =>
  looplm(
    "eval",
    "--model",
    plainDir,
    "--task",
    "lm",
    "--corpus",
    corpus,
    "--tokenizer",
    "char",
    ...more,
  );

let root: string;
let runDir: string;
let plainDir: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "looplm-eval-"));
  runDir = join(root, "mano-run");
  saveGatedRun(runDir);
  writeFileSync(
    join(runDir, "log.jsonl"),
    `${JSON.stringify({ step: 1, loss: 3.2, lr: 1e-3, grad_norm: 1, tokens_per_s: 10, elapsed_s: 1 })}\n`,
  );
  plainDir = join(root, "plain");
  saveCheckpoint(plainDir, tinyModel(64, false));
});

afterEach(() => vi.restoreAllMocks());

describe("looplm eval", () => {
  it("takes the task from run.json, evaluates every step and a q sweep, writes <run>/eval.json", async () => {
    const out = await looplm(
      "eval",
      "--model",
      join(runDir, "final"),
      "--count",
      "10",
      "--batch-size",
      "4",
      "--q-sweep",
      "0,0.5,1",
    );
    const ev = JSON.parse(readFileSync(join(runDir, "eval.json"), "utf8")) as EvalFile;
    expect(ev.task.name).toBe("mano");
    expect(ev.task.max_ops).toBe(2);
    expect(ev.metric).toBe("accuracy");
    expect(ev.per_step).toHaveLength(3);
    expect(ev.count).toBe(10);
    expect(ev.model.label).toBe("1⊗3");
    expect(ev.gated.map((g) => g.q)).toEqual([0, 0.5, 1]);
    expect(ev.gated[0]!.value).toBe(ev.per_step[0]);
    expect(out).toMatch(/step +Accuracy/);
    expect(out).toMatch(/q +mean exit step +Accuracy/);
    expect(out).toContain(`wrote ${join(runDir, "eval.json")}`);
  });

  it("evaluates a mixed-difficulty p-hop run on its own mixed eval set, and each p apart", async () => {
    const dir = join(root, "phop-mixed");
    const m = tinyModel(5, false);
    saveCheckpoint(join(dir, "final"), m);
    const task = { name: "phop", alphabet: 3, length: 8, hops: 2, dense: false, mixed_hops: true };
    writeFileSync(
      join(dir, "run.json"),
      JSON.stringify({ task, model: m.config, train: {}, seed: 0, stage: "pretrain" }),
    );
    const out = await looplm(
      "eval",
      "--model",
      join(dir, "final"),
      "--count",
      "12",
      "--batch-size",
      "3",
    );
    const ev = JSON.parse(readFileSync(join(dir, "eval.json"), "utf8")) as EvalFile;
    expect(ev.task).toMatchObject(task);
    // each p's rows apart: together they are the whole set
    const byHops = ev.by_hops!;
    expect(byHops.map((h) => h.hops)).toEqual([1, 2]);
    expect(byHops.reduce((a, h) => a + h.count, 0)).toBe(12);
    for (let r = 0; r < 3; r++) {
      const parts = byHops.reduce((a, h) => a + h.count * h.per_step[r]!, 0) / 12;
      expect(parts).toBeCloseTo(ev.per_step[r]!, 12);
    }
    expect(out).toMatch(/\np +rows +step 1 +step 2 +step 3\n/);
    // a fixed-p run has no such part
    const fixed = join(root, "phop-fixed");
    saveCheckpoint(join(fixed, "final"), m);
    writeFileSync(
      join(fixed, "run.json"),
      JSON.stringify({
        task: { ...task, mixed_hops: undefined },
        model: m.config,
        train: {},
        seed: 0,
        stage: "pretrain",
      }),
    );
    await looplm("eval", "--model", join(fixed, "final"), "--count", "4", "--batch-size", "2");
    expect(JSON.parse(readFileSync(join(fixed, "eval.json"), "utf8")).by_hops).toBeUndefined();
  });

  it("then `looplm report <run>` writes report.html with the gate plots", async () => {
    const out = await looplm("report", runDir);
    const html = readFileSync(join(runDir, "report.html"), "utf8");
    expect(out).toContain("report.html");
    expect(html).toContain('data-chart="Depth/accuracy frontier over q"');
    expect(html).toContain('data-chart="Training loss"');
  });

  it("perplexity and multiple choice on an lm task (char tokenizer, generic MC file)", async () => {
    const corpus = join(root, "corpus.txt");
    writeFileSync(corpus, "the cat sat on the mat. the dog ate the log. ".repeat(60));
    const mc = join(root, "items.jsonl");
    writeFileSync(
      mc,
      [
        { context: "the cat sat on the", choices: ["mat.", "dog"], label: 0 },
        { context: "the dog ate", choices: ["the log.", "a cat"], label: 0 },
        { context: "", choices: ["the", "log"], label: 0 },
      ]
        .map((x) => JSON.stringify(x))
        .join("\n"),
    );
    const outFile = join(root, "lm-eval.json");
    const out = await lmEval(
      corpus,
      "--seq-len",
      "16",
      "--count",
      "3",
      "--mc",
      mc,
      "--mc-limit",
      "2",
      "--out",
      outFile,
    );
    const ev = JSON.parse(readFileSync(outFile, "utf8")) as EvalFile;
    expect(ev.metric).toBe("ppl");
    expect(ev.count).toBe(3 * 16);
    // without thresholds too, every step's logits are computed and counted
    const cfg = tinyModel(64, false).config;
    expect(ev.model.flops_per_token).toBe(
      flopsPerToken(cfg, { seqLen: 16, logitSteps: 3 }).forwardPerToken,
    );
    expect(ev.model.flops_per_token).toBeGreaterThan(
      flopsPerToken(cfg, { seqLen: 16 }).forwardPerToken,
    );
    expect(ev.per_step.every((p) => p > 1)).toBe(true);
    expect(ev.mc!.source).toBe("items");
    expect(ev.mc!.items).toBe(2);
    expect(ev.mc!.per_step).toHaveLength(3);
    expect(out).toMatch(/step +Perplexity +items acc +items acc_norm/);
    expect(existsSync(join(plainDir, "eval.json"))).toBe(false);
  });
});

describe("looplm eval with a saved tokenizer", () => {
  it("uses the tokenizer.json beside the checkpoint unless --tokenizer is given", async () => {
    const text = "abc abd abe. ".repeat(80);
    const corpus = join(root, "abc.txt");
    writeFileSync(corpus, text);
    const dir = join(root, "lm-final");
    saveCheckpoint(dir, tinyModel(32, false));
    const tok = buildCharTokenizer([text]);
    writeFileSync(join(dir, "tokenizer.json"), JSON.stringify(tok.toJSON()));
    const outFile = join(root, "abc-eval.json");
    await looplm(
      "eval",
      "--model",
      dir,
      "--task",
      "lm",
      "--corpus",
      corpus,
      "--seq-len",
      "8",
      "--count",
      "2",
      "--out",
      outFile,
    );
    const ev = JSON.parse(readFileSync(outFile, "utf8")) as EvalFile;
    expect(ev.task.tokenizer).toBe(join(dir, "tokenizer.json"));
    expect(ev.count).toBe(16);
  });

  it("scores the first PIQA items through --piqa/--labels", async () => {
    const data = testdataPath("data");
    const outFile = join(root, "piqa-eval.json");
    const corpus = join(root, "piqa-corpus.txt");
    writeFileSync(corpus, "Question: how do you open a jar?\nAnswer: twist the lid. ".repeat(40));
    const out = await lmEval(
      corpus,
      "--seq-len",
      "8",
      "--count",
      "1",
      "--piqa",
      join(data, "piqa-valid.jsonl"),
      "--labels",
      join(data, "piqa-valid-labels.lst"),
      "--mc-limit",
      "3",
      "--out",
      outFile,
    );
    const ev = JSON.parse(readFileSync(outFile, "utf8")) as EvalFile;
    expect(ev.mc!.source).toBe("piqa");
    expect(ev.mc!.items).toBe(3);
    expect(out).toMatch(/piqa acc +piqa acc_norm/);
  });
});

describe("looplm eval / report errors", () => {
  const model = () => join(runDir, "final");

  it("unknown flags are commander errors", async () => {
    await expect(looplm("eval", "--model", model(), "--bogus")).rejects.toBeInstanceOf(
      CommanderError,
    );
  });

  it("bad values and combinations are one-line CliErrors naming the flag", async () => {
    const cases: [string[], RegExp][] = [
      [["--q", "2"], /^--q must be in \[0, 1\], got 2$/],
      [["--q", "x"], /^--q must be a number, got "x"$/],
      [["--q-sweep", "0.2,1.5"], /^--q-sweep must be in \[0, 1\], got 1.5$/],
      [["--q", "0.5", "--q-sweep"], /--q and --q-sweep cannot be used together/],
      [["--count", "0"], /^--count must be ≥ 1, got 0$/],
      [["--piqa", "p.jsonl"], /--piqa needs --labels/],
      [["--labels", "l.lst"], /--labels goes with --piqa/],
      [["--mc", join(root, "missing.jsonl")], /cannot read .*missing.jsonl/],
    ];
    for (const [extra, msg] of cases) {
      const err = await looplm("eval", "--model", model(), ...extra).catch((e) => e);
      expect(err, extra.join(" ")).toBeInstanceOf(CliError);
      expect((err as Error).message, extra.join(" ")).toMatch(msg);
      expect((err as Error).message).not.toContain("\n");
    }
  });

  it("names a missing model, a missing task, a gateless model with --q, MC without lm", async () => {
    await expect(looplm("eval", "--model", join(root, "nope"))).rejects.toThrow(
      /--model .*nope does not exist/,
    );
    await expect(looplm("eval", "--model", plainDir)).rejects.toThrow(/--task is required/);
    await expect(
      looplm("eval", "--model", plainDir, "--task", "mano", "--max-ops", "2", "--q", "0.5"),
    ).rejects.toThrow(/need a model with an exit gate/);
    const mc = join(root, "one.jsonl");
    writeFileSync(mc, '{"context": "a", "choices": ["b", "c"], "label": 0}\n');
    await expect(looplm("eval", "--model", model(), "--mc", mc)).rejects.toThrow(
      /use --task lm \(got mano\)/,
    );
    await expect(
      looplm("eval", "--model", model(), "--task", "mano", "--max-ops", "5"),
    ).rejects.toThrow(/task mano-L5 has 35 symbols but the model's vocab_size is 32/);
  });

  it("report on a folder that is neither a run nor a sweep", async () => {
    const empty = join(root, "empty");
    mkdirSync(empty);
    await expect(looplm("report", empty)).rejects.toThrow(
      /holds neither run.json .* nor sweep.json/,
    );
    await expect(looplm("report")).rejects.toBeInstanceOf(CommanderError);
  });
});
