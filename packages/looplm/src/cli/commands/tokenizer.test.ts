import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testdataPath } from "@loop/test-support";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { buildProgram } from "../program.js";

async function run(...args: string[]): Promise<{ out: string; err: string }> {
  let out = "";
  let err = "";
  const so = vi.spyOn(process.stdout, "write").mockImplementation((c: string | Uint8Array) => {
    out += typeof c === "string" ? c : Buffer.from(c).toString("utf8");
    return true;
  });
  const se = vi.spyOn(process.stderr, "write").mockImplementation((c: string | Uint8Array) => {
    err += String(c);
    return true;
  });
  try {
    await buildProgram().parseAsync(["node", "looplm", ...args]);
  } finally {
    so.mockRestore();
    se.mockRestore();
  }
  return { out, err };
}

let dir: string;
const text = readFileSync(testdataPath("data", "tinyshakespeare.txt"), "utf8").slice(0, 80_000);
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "looplm-tok-cli-"));
  await writeFile(join(dir, "corpus.txt"), text);
  await writeFile(join(dir, "empty.txt"), "");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const EDGE = "héllo  wörld\n\n\t😀 👩‍👩‍👧 e\u0301 中文 <|endoftext|> end ";

describe("looplm tokenizer", () => {
  it("trains BPE to a tokenizer.json, and encode → decode round-trips exactly", async () => {
    const tok = join(dir, "tok.json");
    const { err } = await run(
      "tokenizer",
      "train",
      "--corpus",
      join(dir, "corpus.txt"),
      "--vocab",
      "400",
      "--out",
      tok,
    );
    expect(err).toMatch(/bpe tokenizer: 400 tokens/);
    const json = JSON.parse(readFileSync(tok, "utf8"));
    expect(json.model.type).toBe("BPE");
    expect(json.pre_tokenizer.type).toBe("ByteLevel");
    expect(Object.keys(json.model.vocab).length).toBe(400);

    const enc = await run("tokenizer", "encode", "--tokenizer", tok, "--text", EDGE);
    const ids = JSON.parse(enc.out);
    expect(ids.every((i: number) => Number.isInteger(i) && i >= 0 && i < 400)).toBe(true);
    expect(ids.length).toBeLessThan(new TextEncoder().encode(EDGE).length);
    const dec = await run("tokenizer", "decode", "--tokenizer", tok, "--ids", enc.out);
    expect(dec.out).toBe(EDGE);
    const spaced = await run("tokenizer", "decode", "--tokenizer", tok, "--ids", ids.join(" "));
    expect(spaced.out).toBe(EDGE);

    await writeFile(join(dir, "in.txt"), EDGE);
    await writeFile(join(dir, "ids.json"), enc.out);
    expect(
      (await run("tokenizer", "encode", "--tokenizer", tok, "--file", join(dir, "in.txt"))).out,
    ).toBe(enc.out);
    expect(
      (await run("tokenizer", "decode", "--tokenizer", tok, "--file", join(dir, "ids.json"))).out,
    ).toBe(EDGE);
    expect((await run("tokenizer", "encode", "--tokenizer", tok, "--text", "")).out).toBe("[]\n");
  });

  it("builds a character tokenizer", async () => {
    const tok = join(dir, "chars.json");
    await run(
      "tokenizer",
      "train",
      "--corpus",
      join(dir, "corpus.txt"),
      "--kind",
      "char",
      "--out",
      tok,
    );
    const enc = await run("tokenizer", "encode", "--tokenizer", tok, "--text", "To be, or not");
    expect(JSON.parse(enc.out).length).toBe(13);
    expect((await run("tokenizer", "decode", "--tokenizer", tok, "--ids", enc.out)).out).toBe(
      "To be, or not",
    );
  });

  it("names the option in errors", async () => {
    const out = join(dir, "x.json");
    await expect(
      run("tokenizer", "train", "--corpus", join(dir, "missing"), "--out", out),
    ).rejects.toThrow(/^--corpus: no such file or folder/);
    await expect(
      run("tokenizer", "train", "--corpus", join(dir, "empty.txt"), "--out", out),
    ).rejects.toThrow(/^--corpus: ".*empty.txt" holds no text/);
    await expect(run("tokenizer", "train", "--vocab", "100", "--out", out)).rejects.toThrow(
      /--vocab must be ≥ 257/,
    );
    await expect(run("tokenizer", "train", "--kind", "word", "--out", out)).rejects.toThrow(
      /--kind must be one of bpe, char/,
    );
    await expect(
      run("tokenizer", "encode", "--tokenizer", join(dir, "nope.json"), "--text", "a"),
    ).rejects.toThrow(/^--tokenizer: cannot read/);
    await expect(
      run("tokenizer", "decode", "--tokenizer", join(dir, "tok.json"), "--ids", "1 x"),
    ).rejects.toThrow(/--ids: item 1 must be a token id in \[0, 399\], got "x"/);
    await expect(
      run(
        "tokenizer",
        "encode",
        "--tokenizer",
        join(dir, "tok.json"),
        "--text",
        "a",
        "--file",
        "b",
      ),
    ).rejects.toThrow(/either --text or --file/);
  });
});
