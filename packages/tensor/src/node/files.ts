/**
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
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import {
  decodeSafetensors,
  encodeSafetensors,
  type NamedArray,
  type SafetensorsFile,
} from "../io/safetensors.js";

/** Write `data` to `path` atomically: a crash leaves either the old file or the new one. */
export function writeFileAtomic(path: string, data: Uint8Array | string): void {
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${Date.now()}`);
  const fd = openSync(tmp, "w");
  try {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, path);
}

export function readSafetensorsFile(path: string): SafetensorsFile {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new Error(
      `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  return decodeSafetensors(bytes, path);
}

export function writeSafetensorsFile(
  path: string,
  tensors: Map<string, NamedArray> | Record<string, NamedArray>,
  metadata?: Record<string, string>,
): void {
  writeFileAtomic(path, encodeSafetensors(tensors, metadata));
}

/** Parse a JSON file; errors name the file and whether it was missing or malformed. */
export function readJsonFile<T = unknown>(path: string): T {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new Error(
      `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw new Error(`${path} is not valid JSON: ${(e as Error).message}`);
  }
}
