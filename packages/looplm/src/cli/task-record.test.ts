/**
 * A trained model records its task and tokenizer (task.json); `generate` and `eval` use them by
 * default and refuse a different tokenizer of the same size (by hash) or another task, naming
 * both; a model saved without a record still works, saying so in one line. `tokenizer encode`
 * refuses text that is not UTF-8, as the corpus loaders do.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { run } from "./run-in-process.test-util.js";
import { cliWithin } from "./spawn-cli.test-util.js";
import { TINY_MODEL, TINY_TRAIN } from "./tiny-args.test-util.js";

const tmp = () => mkdtempSync(join(tmpdir(), "looplm-record-"));
let dir: string;
let lmRun: string;
let other: string;

beforeAll(async () => {
  dir = tmp();
  writeFileSync(join(dir, "a.txt"), "abc defg hij. ".repeat(80));
  // the same number of distinct characters, other ones: a char tokenizer of the same size
  writeFileSync(join(dir, "b.txt"), "klm nopq rst. ".repeat(80));
  lmRun = join(dir, "lm");
  await run(
    "train",
    ...["--task", "lm", "--corpus", join(dir, "a.txt"), "--tokenizer", "char", "--seq-len", "16"],
    ...TINY_MODEL,
    ...["--loops", "1", "--batch", "2", "--steps", "1", "--eval-every", "0", "--eval-count", "4"],
    ...["--warmup", "0", "--out", lmRun],
  );
  other = join(dir, "other.json");
  await run("tokenizer", "train", "--kind", "char", "--corpus", join(dir, "b.txt"), "--out", other);
}, 120_000);

describe("task records", () => {
  it("a run records its task and its tokenizer's hash beside the weights", () => {
    const r = JSON.parse(readFileSync(join(lmRun, "final", "task.json"), "utf8"));
    expect(r.format).toBe(1);
    expect(r.task).toMatchObject({ name: "lm", tokenizer: "char", seq_len: 16 });
    expect(r.tokenizer).toMatchObject({ file: "tokenizer.json", source: "char" });
    expect(r.tokenizer.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(join(lmRun, "task.json"), "utf8")).toBe(
      readFileSync(join(lmRun, "final", "task.json"), "utf8"),
    );
  });

  it("generate and eval refuse another tokenizer of the same size, naming both", async () => {
    const own = JSON.parse(readFileSync(join(lmRun, "final", "tokenizer.json"), "utf8"));
    const theirs = JSON.parse(readFileSync(other, "utf8"));
    expect(Object.keys(theirs.model.vocab).length).toBe(Object.keys(own.model.vocab).length);
    const gen = ["generate", "--model", lmRun, "--prompt", "abc", "--max-new", "4"];
    const { out, err } = await run(...gen);
    // the prompt echoed, then what was generated
    expect(out.startsWith("abc")).toBe(true);
    expect(out.length).toBeGreaterThan(3);
    expect((await run(...gen, "--no-echo")).out).toBe(out.slice(3));
    expect(err).not.toMatch(/no task record/);
    const refusal = new RegExp(
      `^--tokenizer ${other} \\(sha256 [0-9a-f]{12}…, \\d+ tokens\\) is not the tokenizer the model was trained with: ${join(lmRun, "final", "tokenizer.json")} \\(sha256 [0-9a-f]{12}…, from char; recorded in ${join(lmRun, "final", "task.json")}\\)`,
    );
    await expect(run(...gen, "--tokenizer", other)).rejects.toThrow(refusal);
    await expect(
      run(
        "eval",
        "--model",
        lmRun,
        "--count",
        "4",
        "--tokenizer",
        other,
        "--out",
        join(dir, "e.json"),
      ),
    ).rejects.toThrow(refusal);
    // the copy beside the weights swapped for another: refused too
    const copy = join(dir, "copy");
    const swapped = join(copy, "final");
    mkdirSync(swapped, { recursive: true });
    for (const f of ["config.json", "model.safetensors", "task.json"])
      copyFileSync(join(lmRun, "final", f), join(swapped, f));
    copyFileSync(other, join(swapped, "tokenizer.json"));
    await expect(run("generate", "--model", swapped, "--prompt", "klm")).rejects.toThrow(
      new RegExp(
        `^${join(swapped, "tokenizer.json")} \\(sha256 [0-9a-f]{12}…, \\d+ tokens\\) no longer holds the tokenizer the model was trained with \\(sha256 [0-9a-f]{12}…, from char; recorded in ${join(swapped, "task.json")}\\): it was replaced or edited; put that tokenizer back there or pass it with --tokenizer$`,
      ),
    );
  });

  it("eval takes the recorded task and refuses another", async () => {
    const r = join(dir, "phop");
    await run("train", ...TINY_TRAIN, "--out", r);
    // a checkpoint copied away from its run folder still knows its task
    rmSync(join(r, "run.json"));
    const { out, err } = await run(
      "eval",
      "--model",
      join(r, "final"),
      "--count",
      "4",
      "--out",
      join(dir, "p.json"),
    );
    expect(out).toMatch(/Accuracy/);
    expect(err).not.toMatch(/no task record/);
    await expect(
      run(
        "eval",
        "--model",
        join(r, "final"),
        "--task",
        "mano",
        "--count",
        "4",
        "--out",
        join(dir, "m.json"),
      ),
    ).rejects.toThrow(
      `--task mano is not the task the model was trained on: phop (recorded in ${join(r, "final", "task.json")}); evaluate it on phop`,
    );
  });

  it("a language model's record edited to say phop is refused, not scored on p-hop", async () => {
    const edited = join(dir, "edited");
    execFileSync("cp", ["-r", lmRun, edited]);
    const path = join(edited, "final", "task.json");
    const r = JSON.parse(readFileSync(path, "utf8"));
    r.task.name = "phop";
    writeFileSync(path, JSON.stringify(r));
    await expect(
      run("eval", "--model", edited, "--count", "4", "--out", join(dir, "edited.json")),
    ).rejects.toThrow(
      `${path} is not a looplm task record: task "phop" reads no text, yet the record names a tokenizer (a language model's record edited to another task?); restore it or remove it`,
    );
  });

  it("a record that disagrees with its run's run.json on the task is refused", async () => {
    const edited = join(dir, "edited-both");
    execFileSync("cp", ["-r", lmRun, edited]);
    const path = join(edited, "final", "task.json");
    const r = JSON.parse(readFileSync(path, "utf8"));
    writeFileSync(path, JSON.stringify({ ...r, task: { name: "phop" }, tokenizer: null }));
    await expect(
      run("eval", "--model", edited, "--count", "4", "--out", join(dir, "edited-both.json")),
    ).rejects.toThrow(
      `${path} records task phop, but ${join(edited, "run.json")} records lm: one of them was edited; restore it (or remove ${path})`,
    );
  });

  it("a model saved without a record still works, with one line saying so", async () => {
    const old = join(dir, "old");
    mkdirSync(join(old, "final"), { recursive: true });
    for (const f of ["config.json", "model.safetensors", "tokenizer.json"])
      copyFileSync(join(lmRun, "final", f), join(old, "final", f));
    const { out, err } = await run(
      "generate",
      "--model",
      join(old, "final"),
      "--prompt",
      "abc",
      "--max-new",
      "2",
    );
    expect(out.length).toBeGreaterThan(3);
    expect(err.trim().split("\n")).toEqual([
      `looplm: ${join(old, "final")} has no task record (task.json; models saved by older versions have none): its task and tokenizer cannot be checked`,
    ]);
  });

  it("a Hugging Face folder is said to be one, not an old looplm model", async () => {
    const hf = join(dir, "hf");
    await run("export-hf", "--model", join(lmRun, "final"), "--out", hf);
    copyFileSync(join(lmRun, "final", "tokenizer.json"), join(hf, "tokenizer.json"));
    const { err } = await run("generate", "--model", hf, "--prompt", "abc", "--max-new", "2");
    expect(err.trim().split("\n")).toEqual([
      `looplm: ${hf} is a Hugging Face folder, which records no task or tokenizer (task.json): its task and tokenizer cannot be checked`,
    ]);
  });

  it("tokenizer encode --file names why a path cannot be read, in words", async () => {
    await expect(run("tokenizer", "encode", "--tokenizer", other, "--file", dir)).rejects.toThrow(
      `--file: cannot read ${dir}: it is a folder, not a regular file; put the file itself there`,
    );
    const none = join(dir, "none.txt");
    await expect(run("tokenizer", "encode", "--tokenizer", other, "--file", none)).rejects.toThrow(
      `--file: cannot read ${none}: it does not exist`,
    );
  });

  it("tokenizer encode --file refuses text that is not UTF-8", async () => {
    const bad = join(dir, "latin1.txt");
    writeFileSync(bad, Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x6f, 0x6b]));
    await expect(run("tokenizer", "encode", "--tokenizer", other, "--file", bad)).rejects.toThrow(
      `--file ${bad} is not valid UTF-8 text (first bad byte at offset 3); convert it first, e.g. iconv -f latin1 -t utf-8`,
    );
  });

  it("tokenizer encode --text refuses bytes that were not UTF-8 (U+FFFD) instead of encoding <unk>", async () => {
    // (node hands `--text $'\xe9'` over as U+FFFD: the byte itself is gone by then)
    await expect(
      run("tokenizer", "encode", "--tokenizer", other, "--text", "caf\uFFFD"),
    ).rejects.toThrow(
      "--text holds U+FFFD, the mark of bytes that are not UTF-8 (position 3): pass the text as UTF-8 (convert it first, e.g. with iconv -f latin1 -t utf-8)",
    );
  });

  it("generate --prompt refuses bytes that were not UTF-8 (U+FFFD) before loading the model", async () => {
    await expect(
      run("generate", "--model", lmRun, "--prompt", "ab\uFFFD", "--max-new", "1"),
    ).rejects.toThrow(
      "--prompt holds U+FFFD, the mark of bytes that are not UTF-8 (position 2): pass the text as UTF-8 (convert it first, e.g. with iconv -f latin1 -t utf-8)",
    );
  });

  it("tokenizer encode --file refuses a FIFO at once instead of waiting for a writer", async () => {
    const fifo = join(dir, "text.fifo");
    execFileSync("mkfifo", [fifo]);
    const r = cliWithin(["tokenizer", "encode", "--tokenizer", other, "--file", fifo]);
    expect([r.status, r.stderr]).toEqual([
      1,
      `looplm: --file: cannot read ${fifo}: it is a FIFO, not a regular file; put the file itself there\n`,
    ]);
  });
});
