/*
 * Reading a small record the user may have put in place (a study's seed record): only a regular
 * file is opened, and never in a way that blocks — a FIFO, socket or device under the record's
 * name is refused at once, naming what it is, instead of waiting forever for a writer — and only
 * up to a size a record can have.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats, statSync } from "node:fs";
import { CliError } from "./errors.js";

/** What a non-regular file is, in words ("a FIFO"). */
export function fileKind(st: Stats): string {
  if (st.isDirectory()) return "a folder";
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  return "not a regular file";
}

/**
 * The UTF-8 text of the regular file `path`, or null when nothing is there. `what` names the
 * file in errors ("a seed record"); a file over `maxBytes`, not regular, or not UTF-8 is refused.
 */
export function readRegularFile(path: string, what: string, maxBytes: number): string | null {
  let st: Stats;
  try {
    st = statSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new CliError(`cannot read ${path}: ${(e as Error).message}`);
  }
  const notRegular = (s: Stats) =>
    new CliError(`${path} is ${fileKind(s)}, not a regular file: ${what} is a file; remove it`);
  if (!st.isFile()) throw notRegular(st);
  let fd: number;
  try {
    // O_NONBLOCK: had it been swapped for a FIFO since the stat, the open still returns at once
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    throw new CliError(`cannot read ${path}: ${(e as Error).message}`);
  }
  try {
    const now = fstatSync(fd);
    if (!now.isFile()) throw notRegular(now);
    if (now.size > maxBytes)
      throw new CliError(
        `${path} holds ${now.size} bytes, more than ${what} can (at most ${maxBytes}); remove it`,
      );
    const buf = Buffer.alloc(now.size);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(buf.subarray(0, got));
    } catch {
      throw new CliError(`${path} is not UTF-8 text: it is not ${what}; remove it`);
    }
  } finally {
    closeSync(fd);
  }
}
