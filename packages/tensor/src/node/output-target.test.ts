import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { checkWritableFile, writeFileAtomic } from "./files.js";
import { makeDirectory } from "./output-target.js";

const tmp = () => mkdtempSync(join(tmpdir(), "output-target-"));

describe("a new file whose folder cannot take it", () => {
  it("names the missing folder, not the file, as what does not exist", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "out-folder-")), "nope", "deeper");
    const path = join(dir, "e.json");
    const want = `cannot write ${path}: its folder ${dir} does not exist`;
    expect(() => writeFileAtomic(path, "{}")).toThrow(want);
    expect(() => checkWritableFile(path)).toThrow(want);
  });

  it("says that a folder such as /proc takes no new files", () => {
    expect(() => checkWritableFile("/proc/e.json")).toThrow(
      "cannot write /proc/e.json: /proc does not accept new files",
    );
  });
});

describe("the one output rule", () => {
  it("writes into /dev/null and leaves it a character device", () => {
    checkWritableFile("/dev/null");
    writeFileAtomic("/dev/null", "x".repeat(1000));
    expect(statSync("/dev/null").isCharacterDevice()).toBe(true);
  });

  it("fails on /dev/full with a sentence naming it, and leaves the device", () => {
    expect(() => writeFileAtomic("/dev/full", "data")).toThrow(
      /^cannot write \/dev\/full: the character device refused the data \(no space left\)$/,
    );
    expect(statSync("/dev/full").isCharacterDevice()).toBe(true);
  });

  it("refuses a FIFO nobody reads at once, and feeds one that is read", async () => {
    const d = tmp();
    const fifo = join(d, "pipe");
    execFileSync("mkfifo", [fifo]);
    checkWritableFile(fifo);
    expect(() => writeFileAtomic(fifo, "x")).toThrow(/it is a FIFO and nothing reads it/);
    const reader = spawn("cat", [fifo]);
    let got = "";
    reader.stdout.on("data", (c) => (got += c));
    const done = new Promise((r) => reader.on("close", r));
    for (let i = 0; ; i++) {
      try {
        writeFileAtomic(fifo, "hello through the pipe\n");
        break;
      } catch (e) {
        // the reader has not opened its end yet
        if (i > 200 || !/nothing reads it/.test((e as Error).message)) throw e;
        await sleep(25);
      }
    }
    await done;
    expect(got).toBe("hello through the pipe\n");
    expect(statSync(fifo).isFIFO()).toBe(true);
    expect(readdirSync(d)).toEqual(["pipe"]);
  });

  it("refuses a socket, a folder and an empty path with the reason", async () => {
    const d = tmp();
    const sock = join(d, "s.sock");
    const server = createServer();
    await new Promise<void>((r) => server.listen(sock, r));
    try {
      expect(() => checkWritableFile(sock)).toThrow(/it is a socket/);
      expect(() => writeFileAtomic(sock, "x")).toThrow(/it is a socket/);
      expect(statSync(sock).isSocket()).toBe(true);
    } finally {
      server.close();
    }
    expect(() => writeFileAtomic(d, "x")).toThrow(/it is a folder, not a file/);
    expect(() => writeFileAtomic("", "x")).toThrow(/the path is empty/);
    expect(() => checkWritableFile("")).toThrow(/the path is empty/);
  });

  it("makeDirectory refuses an empty path and names what stands where the folder should be", () => {
    const d = tmp();
    expect(() => makeDirectory("")).toThrow(/the path is empty; name a folder/);
    const fifo = join(d, "run");
    execFileSync("mkfifo", [fifo]);
    expect(() => makeDirectory(fifo)).toThrow(/exists as a FIFO, not a folder/);
    writeFileSync(join(d, "file"), "");
    expect(() => makeDirectory(join(d, "file"))).toThrow(/exists as a file, not a folder/);
    expect(() => makeDirectory("/dev/null/x")).toThrow(/\/dev\/null is a character device/);
  });
});

describe("links that lead nowhere", () => {
  it("a dangling link as an output folder is named, not a raw ENOENT from stat", () => {
    const d = tmp();
    const link = join(d, "run");
    symlinkSync(join(d, "gone"), link);
    expect(() => makeDirectory(link)).toThrow(
      `cannot create folder ${link}: ${link} is a symbolic link to ${join(d, "gone")}, which does not exist; remove the link or create its target`,
    );
  });

  it("a looping link as an output is named as one, not ELOOP", () => {
    const d = tmp();
    const link = join(d, "loop");
    symlinkSync(link, link);
    expect(() => writeFileAtomic(link, "x")).toThrow(
      `cannot write ${link}: a symbolic link in it loops (it leads back to itself); replace the link`,
    );
    expect(() => makeDirectory(link)).toThrow(
      `cannot create folder ${link}: a symbolic link in it loops (it leads back to itself); replace the link`,
    );
  });
});
