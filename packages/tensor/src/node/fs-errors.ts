/*
 * File-system failures as sentences that name the path: Node's own messages ("ENOSPC: no space
 * left on device, write") often name no file, and researchers should not have to decode errno.
 */
import { mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";

const REASONS: Record<string, string> = {
  ENOENT: "it does not exist",
  EEXIST: "it already exists",
  ENOTDIR: "a part of the path is a file, not a folder",
  EISDIR: "it is a folder, not a file",
  EACCES: "permission denied",
  EPERM: "the operation is not permitted there",
  ENOSPC: "the disk is full",
  EDQUOT: "the disk quota is used up",
  EROFS: "the file system is read-only",
  ENAMETOOLONG: "the name is too long",
  EMFILE: "too many files are open",
  EIO: "an input/output error occurred",
};

/** The errno code of a Node system error, or undefined. */
export function errnoCode(e: unknown): string | undefined {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** "cannot <action> <path>: <reason>" for a failed file-system call. */
export function fsErrorMessage(action: string, path: string, e: unknown): string {
  const code = errnoCode(e);
  const reason =
    (code && REASONS[code]) ?? (code ? code : e instanceof Error ? e.message : String(e));
  return `cannot ${action} ${path}: ${reason}`;
}

/** An Error carrying `fsErrorMessage` (and the original as its cause). */
export function fsError(action: string, path: string, e: unknown): Error {
  return new Error(fsErrorMessage(action, path, e), { cause: e });
}

/** The result of the file-system call `fn`, its failure thrown as fsError(action, path, …). */
export function orFsError<T>(action: string, path: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw fsError(action, path, e);
  }
}

/**
 * Create `dir` and its missing parents. Unlike `mkdirSync(…, { recursive: true })`, which spins
 * forever on paths such as /proc/x in Node 20, each missing level is created on its own, so an
 * impossible path fails at once with a sentence naming it.
 */
export function makeDirectory(dir: string): void {
  const missing: string[] = [];
  let p = resolve(dir);
  for (;;) {
    try {
      if (!statSync(p).isDirectory())
        throw new Error(`cannot create folder ${dir}: ${p} is a file, not a folder`);
      break;
    } catch (e) {
      if (errnoCode(e) !== "ENOENT") {
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
      if (errnoCode(e) === "EEXIST" && statSync(m).isDirectory()) continue;
      // ENOENT from mkdir under an existing folder: the file system (e.g. /proc) has no room
      // for new entries.
      if (errnoCode(e) === "ENOENT")
        throw new Error(`cannot create folder ${dir}: ${dirname(m)} does not accept new folders`);
      throw fsError("create folder", dir, e);
    }
  }
}
