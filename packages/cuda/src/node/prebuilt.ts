/*
 * The prebuilt CUDA pieces that a package or the offline bundle may carry in prebuilt/ (beside
 * native/ and kernels/), so that a GPU node needs no C compiler, no nvcc and no NVRTC: the
 * driver addon built for linux-x64, and the kernels compiled by nvcc into one fatbin — cubins
 * for PREBUILT_SASS and PTX for PREBUILT_PTX, which the driver compiles for GPUs newer than any
 * of those. manifest.json records the hashes of the sources each was made from; a piece is
 * used only with the very sources it was made from (else the machine builds its own, as
 * without one). `LOOPLM_CUDA_PREBUILT` names another folder, or `0` to use none.
 * write-prebuilt.ts makes them (`pnpm bundle`).
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { kernelUnitHash } from "./compile-kernels.js";
import { type FatbinContents, fatbinContents } from "./fatbin.js";

/** The architectures the prebuilt fatbin carries cubins for: A100, A10/3090, L4/4090, H100/H200. */
export const PREBUILT_SASS = ["sm_80", "sm_86", "sm_89", "sm_90"] as const;
/** …and PTX for, compiled by the driver on a newer GPU (Blackwell and later). */
export const PREBUILT_PTX = ["compute_90"] as const;

/** manifest.json of a prebuilt folder. */
export interface PrebuiltManifest {
  addon?: { file: string; sourceSha256: string; platform: string; arch: string };
  kernels?: { file: string; unitSha256: string; sass: string[]; ptx: string[]; nvcc: string };
}

/** The prebuilt folder in use, or null (LOOPLM_CUDA_PREBUILT=0). */
export function prebuiltDir(): string | null {
  const env = process.env.LOOPLM_CUDA_PREBUILT;
  if (env === "0") return null;
  return env || fileURLToPath(new URL("../../prebuilt/", import.meta.url));
}

function manifest(): { dir: string; m: PrebuiltManifest } | null {
  const dir = prebuiltDir();
  if (!dir || !existsSync(join(dir, "manifest.json"))) return null;
  try {
    return { dir, m: JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) };
  } catch {
    return null;
  }
}

export const sha256 = (data: Uint8Array | string) =>
  createHash("sha256").update(data).digest("hex");

/**
 * The prebuilt addon's path when one is carried for this platform, built from `source` (the
 * addon's C source, where it is there to compare), else null.
 */
export function prebuiltAddon(source: Uint8Array | null): string | null {
  const found = manifest();
  const a = found?.m.addon;
  if (!found || !a || a.platform !== process.platform || a.arch !== process.arch) return null;
  if (source && sha256(source) !== a.sourceSha256) return null;
  const path = join(found.dir, a.file);
  return existsSync(path) ? path : null;
}

/** The prebuilt kernels: the image and what it holds, or null (none, or made from other sources). */
export function prebuiltKernels(): {
  path: string;
  image: Uint8Array;
  contents: FatbinContents;
} | null {
  const found = manifest();
  const k = found?.m.kernels;
  if (!found || !k || k.unitSha256 !== kernelUnitHash()) return null;
  const path = join(found.dir, k.file);
  if (!existsSync(path)) return null;
  const image = new Uint8Array(readFileSync(path));
  return { path, image, contents: fatbinContents(image) };
}
