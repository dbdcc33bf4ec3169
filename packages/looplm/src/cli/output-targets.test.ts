/**
 * Hostile output targets, command by command: a device or FIFO given as `--out` is written into
 * (or refused with the reason) and survives as what it was; an empty path is refused; a run
 * folder that exists as something else is named; a failing stderr never stops training.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { goldenPath } from "@loop/test-support";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { run } from "./run-in-process.test-util.js";
import { cliInShell, savedTinyRun } from "./spawn-cli.test-util.js";
import { TINY_TRAIN } from "./tiny-args.test-util.js";

const tmp = () => mkdtempSync(join(tmpdir(), "looplm-out-"));
let runDir: string;

beforeAll(() => {
  runDir = savedTinyRun("looplm-out-");
});
afterEach(() => vi.restoreAllMocks());

/** A FIFO in a fresh folder, with `cat` reading it; `text()` is what the reader got. */
function readFifo(): { path: string; text: () => Promise<string> } {
  const path = join(tmp(), "pipe");
  execFileSync("mkfifo", [path]);
  const reader = spawn("cat", [path]);
  let got = "";
  reader.stdout.on("data", (c) => (got += c));
  const done = new Promise<string>((r) => reader.on("close", () => r(got)));
  return { path, text: () => done };
}

/** Wait until the FIFO has a reader (`cat` opens its end a moment after it starts). */
async function whenRead(attempt: () => Promise<unknown>): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await attempt();
      return;
    } catch (e) {
      if (i > 100 || !/nothing reads it/.test((e as Error).message)) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

const evalArgs = (out: string) => [
  "eval",
  "--model",
  join(runDir, "final"),
  "--count",
  "8",
  "--out",
  out,
];

describe("--out devices and FIFOs", () => {
  it("eval --out /dev/full fails naming the device; /dev/null is written into and stays a device", async () => {
    await expect(run(...evalArgs("/dev/full"))).rejects.toThrow(
      /^cannot write \/dev\/full: the character device refused the data/,
    );
    expect(statSync("/dev/full").isCharacterDevice()).toBe(true);
    const { out } = await run(...evalArgs("/dev/null"));
    expect(out).toContain("wrote /dev/null");
    expect(statSync("/dev/null").isCharacterDevice()).toBe(true);
  });

  it("eval and forward write into a FIFO that is read, and the FIFO stays a FIFO", async () => {
    const fifo = readFifo();
    await whenRead(() => run(...evalArgs(fifo.path)));
    expect(JSON.parse(await fifo.text()).task.name).toBe("mano");
    expect(statSync(fifo.path).isFIFO()).toBe(true);

    const dir = goldenPath("mamba-1x1");
    const f2 = readFifo();
    await whenRead(() =>
      run("forward", "--model", dir, "--input", join(dir, "inputs.json"), "--out", f2.path),
    );
    // safetensors: an 8-byte header length, then its JSON header
    expect((await f2.text()).slice(8, 9)).toBe("{");
    expect(statSync(f2.path).isFIFO()).toBe(true);
  });

  it("tokenizer train --out /dev/null keeps the device", async () => {
    const corpus = join(tmp(), "c.txt");
    writeFileSync(corpus, "the cat sat on the mat. ".repeat(50));
    await run("tokenizer", "train", "--kind", "char", "--corpus", corpus, "--out", "/dev/null");
    expect(statSync("/dev/null").isCharacterDevice()).toBe(true);
  });

  it("a FIFO nobody reads is refused at once, not waited on", async () => {
    const path = join(tmp(), "pipe");
    execFileSync("mkfifo", [path]);
    await expect(run(...evalArgs(path))).rejects.toThrow(/it is a FIFO and nothing reads it/);
    expect(statSync(path).isFIFO()).toBe(true);
  });
});

describe("empty paths and run folders in the way", () => {
  it("train --out '' is refused and trains nowhere", async () => {
    await expect(run("train", ...TINY_TRAIN, "--out", "")).rejects.toThrow(
      "--out must name a folder, got an empty path",
    );
    expect(existsSync(join(process.cwd(), "run.json"))).toBe(false);
    await expect(run(...evalArgs(""))).rejects.toThrow("--out must name a file, got an empty path");
    await expect(run("report", "")).rejects.toThrow("<dir> must name a folder, got an empty path");
  });

  it("train --out naming a FIFO or a file says what is there", async () => {
    const d = tmp();
    execFileSync("mkfifo", [join(d, "fifo")]);
    writeFileSync(join(d, "file"), "");
    await expect(run("train", ...TINY_TRAIN, "--out", join(d, "fifo"))).rejects.toThrow(
      /fifo exists as a FIFO, not a folder/,
    );
    await expect(run("train", ...TINY_TRAIN, "--out", join(d, "file"))).rejects.toThrow(
      /file exists as a file, not a folder/,
    );
    expect(statSync(join(d, "fifo")).isFIFO()).toBe(true);
    await expect(run("eval", "--model", join(d, "fifo"))).rejects.toThrow(
      /--model .*fifo is a FIFO, not a checkpoint or run folder/,
    );
    await expect(run("generate", "--model", join(d, "file"), "--tokens", "1")).rejects.toThrow(
      /--model .*file is a file, not a checkpoint or run folder/,
    );
  });
});

describe("a failing stderr or stdout", () => {
  it("train 2> /dev/full trains to the end and saves its model", { timeout: 120_000 }, () => {
    const out = join(tmp(), "run");
    const r = cliInShell(["train", ...TINY_TRAIN, "--out", out], "2>/dev/full", 100_000);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/trained 1 steps/);
    expect(existsSync(join(out, "final", "model.safetensors"))).toBe(true);
    // stdout failing too: training still ends with its model; the status says stdout failed
    const out2 = join(tmp(), "run");
    const r2 = cliInShell(["train", ...TINY_TRAIN, "--out", out2], ">/dev/full 2>&1", 100_000);
    expect(r2.status).toBe(1);
    expect(existsSync(join(out2, "final", "model.safetensors"))).toBe(true);
  });
});
