/*
 * The one rule for what an input path may be, beside the one for outputs (output-target.ts).
 * Only a regular file (or a symbolic link to one) is read. A FIFO, socket, device or folder under
 * a file's name is refused before it is opened — opening a FIFO for reading blocks until a writer
 * comes, and a blocked synchronous open also keeps SIGINT/SIGTERM from ever being handled. The
 * open itself is non-blocking, and the opened descriptor is checked again, so a file swapped for a
 * FIFO between the check and the open is refused too. A dangling or looping symbolic link is
 * named as one (stat alone says only ENOENT or ELOOP), and a file is read in chunks up to its end,
 * never trusting its size (files under /proc say 0).
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
  type Stats,
  statSync,
} from "node:fs";
import { errnoCode, fsError } from "./fs-errors.js";
import { kindOfStats } from "./output-target.js";

/** Why `path` (which stat could not follow) is no file: a dangling or looping link, or errno. */
function unfollowable(path: string, e: unknown): Error | null {
  const code = errnoCode(e);
  if (code === "ELOOP")
    return new Error(
      `cannot read ${path}: it is a symbolic link that loops (it leads back to itself); replace it with the file`,
      { cause: e },
    );
  if (code !== "ENOENT") return fsError("read", path, e);
  let link: Stats;
  try {
    link = lstatSync(path);
  } catch {
    return null; // nothing there at all
  }
  if (!link.isSymbolicLink()) return fsError("read", path, e);
  let target = "?";
  try {
    target = readlinkSync(path);
  } catch {}
  return new Error(
    `cannot read ${path}: it is a symbolic link to ${target}, which does not exist; restore its target or remove the link`,
    { cause: e },
  );
}

function notRegular(path: string, st: Stats): Error {
  return new Error(
    `cannot read ${path}: it is a ${kindOfStats(st)}, not a regular file; put the file itself there`,
  );
}

/**
 * Check `path` by the input rule: its Stats when it is a regular file (a symbolic link to one
 * allowed), null when nothing at all is there; otherwise throws one sentence naming the path and
 * what it is (a FIFO, a folder, a dangling or looping link).
 */
export function inputFileStats(path: string): Stats | null {
  let st: Stats;
  try {
    st = statSync(path);
  } catch (e) {
    const err = unfollowable(path, e);
    if (err) throw err;
    return null;
  }
  if (!st.isFile()) throw notRegular(path, st);
  return st;
}

/** Whether a regular file is at `path` (false when nothing is); anything else there throws. */
export function inputFileExists(path: string): boolean {
  return inputFileStats(path) !== null;
}

/** Options of readInputFile. */
export interface ReadInputOptions {
  /** Refuse a file holding more bytes than this, naming the limit. */
  maxBytes?: number;
  /** What the file is, in words ("a seed record"): named when it is too large. */
  what?: string;
}

/**
 * The bytes of the regular file `path`, read by the input rule: anything but a regular file (or a
 * link to one) is refused before it is opened, a missing file is named as missing.
 */
export function readInputFile(path: string, opts: ReadInputOptions = {}): Buffer {
  if (inputFileStats(path) === null) throw fsError("read", path, { code: "ENOENT" });
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    throw unfollowable(path, e) ?? fsError("read", path, e);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(path, st);
    const max = opts.maxBytes ?? Number.POSITIVE_INFINITY;
    const tooLarge = (n: number) =>
      new Error(
        `cannot read ${path}: it holds ${n} bytes or more, more than ${opts.what ?? "the file"} may (at most ${max}); remove it or name another`,
      );
    if (st.size > max) throw tooLarge(st.size);
    const chunks: Buffer[] = [];
    let total = 0;
    let buf = Buffer.allocUnsafe(Math.max(st.size + 1, 64 * 1024));
    let used = 0;
    for (;;) {
      if (used === buf.length) {
        chunks.push(buf);
        buf = Buffer.allocUnsafe(buf.length);
        used = 0;
      }
      let n: number;
      try {
        n = readSync(fd, buf, used, buf.length - used, null);
      } catch (e) {
        throw fsError("read", path, e);
      }
      if (n === 0) break;
      used += n;
      total += n;
      if (total > max) throw tooLarge(total);
    }
    chunks.push(buf.subarray(0, used));
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

/**
 * The UTF-8 text of the regular file `path` (readInputFile); text that is not valid UTF-8 is
 * refused, naming the file, instead of being read with replacement characters.
 */
export function readInputText(path: string, opts: ReadInputOptions = {}): string {
  const bytes = readInputFile(path, opts);
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new Error(
      `cannot read ${path}: it is not valid UTF-8 text${opts.what ? ` (${opts.what} is)` : ""}; re-save it as UTF-8`,
    );
  }
}
