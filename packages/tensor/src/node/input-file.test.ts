/*
 * The one input rule: only a regular file (or a link to one) is opened. Each refusal is checked in
 * a child process with a time limit, so a regression that opens a FIFO (and blocks for ever)
 * fails its test instead of hanging the suite.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { inputFileExists, readInputFile, readInputText } from "./input-file.js";

const tmp = () => mkdtempSync(join(tmpdir(), "input-file-"));
const MODULE = fileURLToPath(new URL("./input-file.ts", import.meta.url));

/** readInputText(path) in a child node killed after 20 s: what it threw, or "read N chars". */
function readInChild(path: string): string {
  const code = `import(${JSON.stringify(MODULE)}).then((m) => {
    try { console.log("read " + m.readInputText(process.argv[1]).length + " chars"); }
    catch (e) { console.log(e.message); }
  });`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "-e", code, path], {
    encoding: "utf8",
    timeout: 20_000,
  });
  if (r.error || r.signal) throw new Error(`the read of ${path} hung (${r.error ?? r.signal})`);
  return r.stdout.trim();
}

describe("the one input rule", () => {
  it("refuses a FIFO at once, naming it, instead of waiting for a writer", () => {
    const fifo = join(tmp(), "latest.json");
    execFileSync("mkfifo", [fifo]);
    expect(readInChild(fifo)).toBe(
      `cannot read ${fifo}: it is a FIFO, not a regular file; put the file itself there`,
    );
  });

  it("refuses a folder and a character device by their kind", () => {
    const dir = join(tmp(), "config.json");
    mkdirSync(dir);
    expect(() => readInputFile(dir)).toThrow(
      `cannot read ${dir}: it is a folder, not a regular file; put the file itself there`,
    );
    expect(readInChild("/dev/zero")).toBe(
      "cannot read /dev/zero: it is a character device, not a regular file; put the file itself there",
    );
  });

  it("names a dangling symbolic link and its target", () => {
    const d = tmp();
    const link = join(d, "seed-5.json");
    symlinkSync(join(d, "gone.json"), link);
    const want = `cannot read ${link}: it is a symbolic link to ${join(d, "gone.json")}, which does not exist; restore its target or remove the link`;
    expect(() => readInputFile(link)).toThrow(want);
    expect(() => inputFileExists(link)).toThrow(want);
  });

  it("names a looping symbolic link", () => {
    const d = tmp();
    const a = join(d, "a");
    symlinkSync(join(d, "b"), a);
    symlinkSync(a, join(d, "b"));
    expect(() => readInputFile(a)).toThrow(
      `cannot read ${a}: it is a symbolic link that loops (it leads back to itself); replace it with the file`,
    );
  });

  it("reads a regular file and a link to one; a missing file is missing", () => {
    const d = tmp();
    const f = join(d, "f.json");
    writeFileSync(f, "x".repeat(200_000));
    symlinkSync(f, join(d, "l.json"));
    expect(readInputText(join(d, "l.json")).length).toBe(200_000);
    expect(inputFileExists(join(d, "nope"))).toBe(false);
    expect(() => readInputFile(join(d, "nope"))).toThrow(
      `cannot read ${join(d, "nope")}: it does not exist`,
    );
  });

  it("reads files whose size says 0 (/proc) to their end", () => {
    expect(readInputText("/proc/self/status")).toMatch(/^Name:/);
  });

  it("refuses a file over its limit and text that is not UTF-8", () => {
    const d = tmp();
    const f = join(d, "t.txt");
    writeFileSync(f, Buffer.from([0x61, 0xe9, 0x62]));
    expect(() => readInputText(f)).toThrow(
      `cannot read ${f}: it is not valid UTF-8 text; re-save it as UTF-8`,
    );
    expect(() => readInputFile(f, { maxBytes: 2, what: "a record" })).toThrow(
      `cannot read ${f}: it holds 3 bytes or more, more than a record may (at most 2); remove it or name another`,
    );
  });
});
