/*
 * File-system failures as sentences that name the path: Node's own messages ("ENOSPC: no space
 * left on device, write") often name no file, and researchers should not have to decode errno.
 */

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
  ELOOP: "a symbolic link in it loops (it leads back to itself); replace the link",
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
