/*
 * Node-only file I/O: atomic writes (temporary file in the same folder, fsync, rename) and
 * safetensors files. Kept out of the browser-safe entry point.
 */
import {
  closeSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
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
import { errnoCode, fsError, orFsError } from "./fs-errors.js";

/**
 * Write `data` to `path` atomically: a crash leaves either the old file or the new one. The
 * temporary file sits beside the target (same folder, so the rename cannot cross file systems)
 * and is removed whenever the write or the rename fails. Failures name `path`.
 */
export function writeFileAtomic(path: string, data: Uint8Array | string): void {
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${Date.now()}`);
  const fd = orFsError("write", path, () => openSync(tmp, "wx"));
  try {
    try {
      const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
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
 * Check, before any long work, that `path` can be written: its folder exists and takes a new
 * file (probed by creating and removing one), and `path` itself is not a folder.
 */
export function checkWritableFile(path: string): void {
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch (e) {
    if (errnoCode(e) !== "ENOENT") throw fsError("write", path, e);
  }
  if (isDir) throw new Error(`cannot write ${path}: it is a folder, not a file`);
  const probe = join(dirname(path), `.${basename(path)}.probe-${process.pid}-${Date.now()}`);
  try {
    closeSync(openSync(probe, "wx"));
    unlinkSync(probe);
  } catch (e) {
    rmSync(probe, { force: true });
    throw fsError("write", path, e);
  }
}

/**
 * Read a `.safetensors` file (F32, F16 and BF16 tensors widen to float32); errors name the file.
 */
export function readSafetensorsFile(path: string): SafetensorsFile {
  return decodeSafetensors(
    orFsError("read", path, () => readFileSync(path)),
    path,
  );
}

/** Write tensors to a `.safetensors` file atomically (a temporary file renamed into place). */
export function writeSafetensorsFile(
  path: string,
  tensors: Map<string, NamedArray> | Record<string, NamedArray>,
  metadata?: Record<string, string>,
): void {
  writeFileAtomic(path, encodeSafetensors(tensors, metadata));
}

/** Parse a JSON file; errors name the file and whether it was missing or malformed. */
export function readJsonFile<T = unknown>(path: string): T {
  const text = orFsError("read", path, () => readFileSync(path, "utf8"));
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw new Error(`${path} is not valid JSON: ${(e as Error).message}`);
  }
}
