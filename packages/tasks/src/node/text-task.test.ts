import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testdataPath } from "@loop/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { trainBpe } from "../lm/bpe-trainer.js";
import { loadTextTask } from "./text-task.js";
import { readTokenizerFile, writeTokenizerFile } from "./tokenizer-file.js";

const shakespeare = readFileSync(testdataPath("data", "tinyshakespeare.txt"), "utf8");
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "looplm-text-"));
  await writeFile(join(dir, "small.txt"), shakespeare.slice(0, 60_000));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("tokenizer files", () => {
  it("write → read gives the same encoding", async () => {
    const tok = trainBpe([shakespeare.slice(0, 50_000)], { vocabSize: 400 });
    const p = join(dir, "tok.json");
    await writeTokenizerFile(p, tok);
    const back = await readTokenizerFile(p);
    const t = shakespeare.slice(100_000, 110_000);
    expect(back.encode(t)).toEqual(tok.encode(t));
    expect(JSON.parse(readFileSync(p, "utf8")).model.type).toBe("BPE");
  });

  it("names the file in errors", async () => {
    await expect(readTokenizerFile(join(dir, "nope.json"))).rejects.toThrow(
      /^cannot read .*nope\.json: it does not exist$/,
    );
    await writeFile(join(dir, "bad.json"), "{not json");
    await expect(readTokenizerFile(join(dir, "bad.json"))).rejects.toThrow(/is not JSON/);
  });
});

describe("loadTextTask", () => {
  it("builds a character-level task from a file, split 95/5", async () => {
    const task = await loadTextTask({
      corpus: join(dir, "small.txt"),
      tokenizer: "char",
      seqLen: 32,
    });
    expect(task.tokenizer.kind).toBe("char");
    expect(task.train.length + task.validation.length).toBe(60_000);
    expect(task.validation.length).toBe(3000);
    const { batch } = task.trainBatch(task.startCursor(0), 4);
    expect(batch.shape).toEqual([4, 32]);
  });

  it("trains BPE on the training split or loads a tokenizer.json", async () => {
    const task = await loadTextTask({
      corpus: join(dir, "small.txt"),
      tokenizer: "bpe",
      vocabSize: 300,
      seqLen: 16,
    });
    expect(task.vocabSize).toBe(300);
    const p = join(dir, "lm-tok.json");
    await writeTokenizerFile(p, task.tokenizer);
    const again = await loadTextTask({ corpus: join(dir, "small.txt"), tokenizer: p, seqLen: 16 });
    expect(again.train).toEqual(task.train);
    expect(again.validation).toEqual(task.validation);
  });
});
