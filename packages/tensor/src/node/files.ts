/*
 * Node-only file I/O: atomic writes (temporary file in the same folder, fsync, rename) and
 * safetensors files. Kept out of the browser-safe entry point.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import {
  decodeSafetensors,
  encodeSafetensors,
  type NamedArray,
  type SafetensorsFile,
} from "../io/safetensors.js";
import { errnoCode, fsError } from "./fs-errors.js";
import { readInputFile, readInputText } from "./input-file.js";
import { checkOutputKind, outputKind, refuseEmptyPath, writeIntoSpecial } from "./output-target.js";

/**
 * Write `data` to `path` by the one output rule (output-target.ts): a regular file (or a new
 * one) atomically, so a crash leaves either the old file or the new one; a character device or
 * a FIFO is written into, never renamed over; anything else, or an empty path, is refused. The
 * temporary file sits beside the target (same folder, so the rename cannot cross file systems)
 * and is removed whenever the write or the rename fails. Failures name `path`.
 */
export function writeFileAtomic(path: string, data: Uint8Array | string): void {
  refuseEmptyPath(path);
  const kind = outputKind(path);
  checkOutputKind(path, kind);
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  if (kind !== "missing" && kind !== "file") {
    writeIntoSpecial(path, kind, bytes);
    return;
  }
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${Date.now()}`);
  let fd: number;
  try {
    fd = openSync(tmp, "wx");
  } catch (e) {
    throw newFileError(path, e);
  }
  try {
    try {
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw fsError("write", path, e);
  }
}

/**
 * Check, before any long work, that `path` can be written by writeFileAtomic: a device or FIFO
 * is writable; otherwise its folder exists and takes a new file (probed by creating and removing
 * one). A folder, socket, block device or empty path is refused with the reason.
 */
export function checkWritableFile(path: string): void {
  refuseEmptyPath(path);
  const kind = outputKind(path);
  checkOutputKind(path, kind);
  if (kind !== "missing" && kind !== "file") return;
  const probe = join(dirname(path), `.${basename(path)}.probe-${process.pid}-${Date.now()}`);
  try {
    closeSync(openSync(probe, "wx"));
    unlinkSync(probe);
  } catch (e) {
    rmSync(probe, { force: true });
    throw newFileError(path, e);
  }
}

/**
 * Why a new file beside `path` could not be created: ENOENT there means its folder is missing
 * or, where the folder exists (/proc), that it takes no new files — not that `path` is missing.
 */
function newFileError(path: string, e: unknown): Error {
  if (errnoCode(e) !== "ENOENT") return fsError("write", path, e);
  const dir = dirname(path);
  return new Error(
    existsSync(dir)
      ? `cannot write ${path}: ${dir} does not accept new files`
      : `cannot write ${path}: its folder ${dir} does not exist`,
    { cause: e },
  );
}

/**
 * Read a `.safetensors` file (F32, F16 and BF16 tensors widen to float32); errors name the file.
 */
export function readSafetensorsFile(path: string): SafetensorsFile {
  return decodeSafetensors(readInputFile(path), path);
}

/** Write tensors to a `.safetensors` file atomically (a temporary file renamed into place). */
export function writeSafetensorsFile(
  path: string,
  tensors: Map<string, NamedArray> | Record<string, NamedArray>,
  metadata?: Record<string, string>,
): void {
  writeFileAtomic(path, encodeSafetensors(tensors, metadata));
}

/**
 * Parse a JSON file, read by the input rule (input-file.ts); errors name the file and whether it
 * was missing, not a regular file, not UTF-8 or malformed.
 */
export function readJsonFile<T = unknown>(path: string): T {
  const text = readInputText(path);
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw new Error(`${path} is not valid JSON: ${(e as Error).message}`);
  }
}
