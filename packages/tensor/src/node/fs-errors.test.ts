import { existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkWritableFile, writeFileAtomic } from "./files.js";
import { fsErrorMessage } from "./fs-errors.js";
import { makeDirectory } from "./output-target.js";

const tmp = () => mkdtempSync(join(tmpdir(), "fs-errors-"));

describe("file-system errors as sentences", () => {
  it("turns errno codes into a sentence naming the path", () => {
    const e = Object.assign(new Error("ENOSPC: no space left on device, write"), {
      code: "ENOSPC",
    });
    expect(fsErrorMessage("write", "runs/x/log.jsonl", e)).toBe(
      "cannot write runs/x/log.jsonl: the disk is full",
    );
  });

  it("makeDirectory fails at once on /proc/x (mkdirSync recursive spins there)", () => {
    expect(() => makeDirectory("/proc/x")).toThrow(
      /^cannot create folder \/proc\/x: \/proc does not accept new folders$/,
    );
  });

  it("makeDirectory names a file in the way and creates missing levels", () => {
    const d = tmp();
    writeFileSync(join(d, "file"), "x");
    expect(() => makeDirectory(join(d, "file", "run"))).toThrow(/is a file, not a folder/);
    makeDirectory(join(d, "a", "b", "c"));
    expect(existsSync(join(d, "a", "b", "c"))).toBe(true);
    makeDirectory(join(d, "a", "b", "c"));
  });

  it("checkWritableFile rejects folders, missing folders and unwritable places before any work", () => {
    const d = tmp();
    expect(() => checkWritableFile(d)).toThrow(/it is a folder, not a file/);
    expect(() => checkWritableFile(join(d, "none", "x.json"))).toThrow(
      /^cannot write .*none\/x\.json: its folder .*none does not exist$/,
    );
    expect(() => checkWritableFile("/proc/x")).toThrow(/^cannot write \/proc\/x: /);
    checkWritableFile(join(d, "ok.json"));
    expect(readdirSync(d)).toEqual([]);
  });

  it("writeFileAtomic leaves no temporary file when the rename fails, and names the path", () => {
    const d = tmp();
    const target = join(d, "target");
    makeDirectory(join(target, "inner")); // a non-empty folder: rename onto it fails
    expect(() => writeFileAtomic(target, "x")).toThrow(/^cannot write .*target: /);
    expect(readdirSync(d)).toEqual(["target"]);
  });
});
