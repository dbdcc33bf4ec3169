/*
 * The folder of the CUDA backend's builds (the driver addon, the compiled kernels):
 * `$LOOPLM_CUDA_CACHE`, else ~/.cache/looplm/cuda, else the temp dir. Files are written under a
 * name of their own and renamed into place, so concurrent builds never clash.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

/** See the file comment. */
export function cudaCacheDir(): string {
  const env = process.env.LOOPLM_CUDA_CACHE;
  const bases = env
    ? [env]
    : [join(homedir(), ".cache", "looplm", "cuda"), join(tmpdir(), "looplm-cuda")];
  for (const d of bases) {
    try {
      mkdirSync(d, { recursive: true });
      return d;
    } catch {
      // not writable: the next place
    }
  }
  return tmpdir();
}

let serial = 0;

/** A temporary name beside `path`, unique to this process and call. */
export function tempBeside(path: string): string {
  return `${path}.${process.pid}.${++serial}.tmp`;
}

/** Write `data` to `path` atomically (a temporary file, then a rename). */
export function writeAtomically(path: string, data: Uint8Array): void {
  const tmp = tempBeside(path);
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  } finally {
    rmSync(tmp, { force: true });
  }
}
