/*
 * The one rule for what an output path may be. A regular file (or nothing yet) is replaced
 * atomically by the caller; a character device (/dev/null, /dev/stdout, a terminal) or a FIFO
 * with a reader is written into, never renamed over (a rename would put a regular file where the
 * device was: as root, /dev/null itself); a socket, a block device, a folder or an empty path is
 * refused with the reason.
 */
import {
  accessSync,
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readlinkSync,
  type Stats,
  statSync,
  writeSync,
} from "node:fs";
import { dirname, resolve } from "node:path";
import { errnoCode, fsError } from "./fs-errors.js";

/** What a path names, as an output sees it. */
export type OutputKind =
  | "missing"
  | "file"
  | "folder"
  | "character device"
  | "FIFO"
  | "socket"
  | "block device"
  | "special file";

/** The kind of the thing `st` describes (following symbolic links, as stat does). */
export function kindOfStats(st: Stats): OutputKind {
  if (st.isFile()) return "file";
  if (st.isDirectory()) return "folder";
  if (st.isCharacterDevice()) return "character device";
  if (st.isFIFO()) return "FIFO";
  if (st.isSocket()) return "socket";
  if (st.isBlockDevice()) return "block device";
  return "special file";
}

/** The kind of `path`: "missing" when nothing is there; other stat failures name the path. */
export function outputKind(path: string): OutputKind {
  try {
    return kindOfStats(statSync(path));
  } catch (e) {
    if (errnoCode(e) === "ENOENT") return "missing";
    throw fsError("write", path, e);
  }
}

/** An empty path names no file: refusing it keeps `--out ''` from meaning the current folder. */
export function refuseEmptyPath(path: string, what = "file"): void {
  if (path.trim() === "")
    throw new Error(`cannot write ${what} "${path}": the path is empty; name a ${what}`);
}

/**
 * Check that `kind` (at `path`) may take a file's content; throws the reason it may not. A
 * device or FIFO also needs write permission.
 */
export function checkOutputKind(path: string, kind: OutputKind): void {
  switch (kind) {
    case "missing":
    case "file":
      return;
    case "folder":
      throw new Error(`cannot write ${path}: it is a folder, not a file`);
    case "socket":
      throw new Error(`cannot write ${path}: it is a socket, not a file or device to write into`);
    case "block device":
      throw new Error(
        `cannot write ${path}: it is a block device (a disk); a file is never written over one`,
      );
    case "special file":
      throw new Error(`cannot write ${path}: it is neither a file nor a device`);
    default:
      try {
        accessSync(path, constants.W_OK);
      } catch (e) {
        throw fsError("write", path, e);
      }
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
}

/**
 * Write `bytes` into the character device or FIFO at `path` (no temporary file, no rename). A
 * FIFO without a reader is refused at once instead of blocking until one comes; a device that
 * refuses the data (/dev/full) fails with a sentence naming it.
 */
export function writeIntoSpecial(path: string, kind: OutputKind, bytes: Uint8Array): void {
  let probe: number | null = null;
  if (kind === "FIFO") {
    // Opening a FIFO for writing blocks until a reader opens it; non-blocking, it fails at once
    // with ENXIO when there is none. Kept open while the blocking descriptor is opened, so the
    // reader never sees the end of its input in between.
    try {
      probe = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (e) {
      if (errnoCode(e) === "ENXIO")
        throw new Error(
          `cannot write ${path}: it is a FIFO and nothing reads it (start its reader first)`,
        );
      throw fsError("write", path, e);
    }
  }
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY);
  } catch (e) {
    if (probe !== null) closeSync(probe);
    throw fsError("write", path, e);
  }
  if (probe !== null) closeSync(probe);
  try {
    writeAll(fd, bytes);
  } catch (e) {
    if (errnoCode(e) === "ENOSPC")
      throw new Error(`cannot write ${path}: the ${kind} refused the data (no space left)`, {
        cause: e,
      });
    throw fsError("write", path, e);
  } finally {
    closeSync(fd);
  }
}

/**
 * Create the folder `dir` and its missing parents. Unlike `mkdirSync(…, { recursive: true })`,
 * which spins forever on paths such as /proc/x in Node 20, each missing level is created on its
 * own, so an impossible path fails at once with a sentence naming it; a level that exists as
 * something else is named with its kind; an empty path (which would mean the current folder) is
 * refused.
 */
export function makeDirectory(dir: string): void {
  if (dir.trim() === "")
    throw new Error(`cannot create folder "${dir}": the path is empty; name a folder`);
  const missing: string[] = [];
  let p = resolve(dir);
  for (;;) {
    try {
      const kind = kindOfStats(statSync(p));
      if (kind !== "folder")
        throw new Error(
          `cannot create folder ${dir}: ${p} ${p === resolve(dir) ? "exists as" : "is"} a ${kind}, not a folder`,
        );
      break;
    } catch (e) {
      // (ENOTDIR: a level above is not a folder; walking up finds and names it)
      if (errnoCode(e) !== "ENOENT" && errnoCode(e) !== "ENOTDIR") {
        if (errnoCode(e) === undefined) throw e;
        throw fsError("create folder", dir, e);
      }
      missing.push(p);
      const up = dirname(p);
      if (up === p) break;
      p = up;
    }
  }
  for (const m of missing.reverse()) {
    try {
      mkdirSync(m);
    } catch (e) {
      if (errnoCode(e) === "EEXIST") {
        const st = statSync(m, { throwIfNoEntry: false });
        if (st?.isDirectory()) continue;
        // (stat found nothing where mkdir found a name: a symbolic link to nothing)
        if (!st)
          throw new Error(
            `cannot create folder ${dir}: ${m} is a symbolic link to ${readlinkSync(m)}, which does not exist; remove the link or create its target`,
          );
      }
      // ENOENT from mkdir under an existing folder: the file system (e.g. /proc) has no room
      // for new entries.
      if (errnoCode(e) === "ENOENT")
        throw new Error(`cannot create folder ${dir}: ${dirname(m)} does not accept new folders`);
      throw fsError("create folder", dir, e);
    }
  }
}
