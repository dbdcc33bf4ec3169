/*
 * The backend's CUDA C kernels as one compilation unit (kernels/common.cuh, then every file of
 * KERNEL_FILES without its include of it), compiled for one GPU architecture by nvcc or by
 * NVRTC and cached by a hash of the unit, the compiler's identity and the architecture:
 *   nvcc -cubin -arch=sm_XY -O3 -std=c++17 -Xptxas -v unit.cu -o kernels.cubin
 * `ptxasReport` reads the per-kernel register spills from ptxas's -v output (the test fails on
 * any; a spill is local-memory traffic in a hot loop).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { KERNEL_FILES } from "../kernel-table.js";
import { cudaCacheDir, writeAtomically } from "./cache-dir.js";

/** The folder of the .cu sources. */
export const KERNEL_DIR = fileURLToPath(new URL("../../kernels/", import.meta.url));

/** The kernels as one self-contained unit (no local includes: NVRTC has no file system). */
export function kernelUnit(): string {
  const common = readFileSync(join(KERNEL_DIR, "common.cuh"), "utf8").replace("#pragma once", "");
  const bodies = KERNEL_FILES.map((f) =>
    readFileSync(join(KERNEL_DIR, f), "utf8").replace('#include "common.cuh"', `// ${f}`),
  );
  return [common, ...bodies].join("\n");
}

function exec(cmd: string, args: string[]): Promise<{ ok: boolean; out: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: 600_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      resolve({ ok: !err, out: `${stdout}${stderr}` });
    });
  });
}

/** nvcc's version line (part of the cache key). */
export async function nvccVersion(nvcc: string): Promise<string> {
  const r = await exec(nvcc, ["--version"]);
  return r.out.trim().split("\n").pop() ?? "";
}

/** Per kernel and architecture: spill stores and loads in bytes, registers. */
export interface PtxasEntry {
  kernel: string;
  arch: string;
  spillStores: number;
  spillLoads: number;
}

/** Parse ptxas -v output: one entry per (kernel, architecture) it compiled. */
export function ptxasReport(log: string): PtxasEntry[] {
  const out: PtxasEntry[] = [];
  let current: { kernel: string; arch: string } | null = null;
  for (const line of log.split("\n")) {
    const c = /Compiling entry function '(\w+)' for '(sm_\d+a?)'/.exec(line);
    if (c) {
      current = { kernel: c[1]!, arch: c[2]! };
      continue;
    }
    const s = /(\d+) bytes spill stores, (\d+) bytes spill loads/.exec(line);
    if (s && current) {
      out.push({ ...current, spillStores: Number(s[1]), spillLoads: Number(s[2]) });
      current = null;
    }
  }
  return out;
}

/** The unit's hash: what a prebuilt image records, to be used only with the same sources. */
export function kernelUnitHash(): string {
  return createHash("sha256").update(kernelUnit()).digest("hex");
}

/**
 * Compile the unit with nvcc for the `archs` (e.g. ["sm_80", "sm_90"]) into one image (a fatbin
 * when several, or when `ptx` names PTX architectures to carry too, e.g. ["compute_90"] for GPUs
 * newer than any of `archs`), with ptxas's report. Resolves to the image, or the compiler's
 * first error line.
 */
export async function compileWithNvcc(
  nvcc: string,
  archs: readonly string[],
  ptx: readonly string[] = [],
): Promise<{ ok: true; image: Uint8Array; log: string } | { ok: false; error: string }> {
  const dir = mkdtempSync(join(tmpdir(), "looplm-cuda-"));
  try {
    const src = join(dir, "kernels.cu");
    const single = archs.length === 1 && ptx.length === 0;
    const out = join(dir, single ? "kernels.cubin" : "kernels.fatbin");
    writeFileSync(src, kernelUnit());
    const target = single
      ? ["-cubin", `-arch=${archs[0]}`]
      : [
          "-fatbin",
          ...archs.flatMap((a) => ["-gencode", `arch=compute_${a.slice(3)},code=${a}`]),
          ...ptx.flatMap((p) => ["-gencode", `arch=${p},code=${p}`]),
        ];
    const r = await exec(nvcc, [...target, "-O3", "-std=c++17", "-Xptxas", "-v", src, "-o", out]);
    if (!r.ok || !existsSync(out)) {
      const first = r.out.split("\n").find((l) => /error/i.test(l)) ?? r.out.trim().split("\n")[0];
      return {
        ok: false,
        error: `nvcc could not compile the CUDA kernels: ${first ?? "no output"}`,
      };
    }
    return { ok: true, image: new Uint8Array(readFileSync(out)), log: r.out };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A compiler of the unit for one architecture: nvcc's path, or NVRTC in the addon. */
export type KernelCompiler =
  | { kind: "nvcc"; nvcc: string }
  | {
      kind: "nvrtc";
      library: string;
      include: string | null;
      compile: (source: string, name: string, options: string[]) => Uint8Array;
    };

/** The cubin of the kernels for `arch` (sm_XY): from the cache, else compiled and cached. */
export async function kernelImage(
  compiler: KernelCompiler,
  arch: string,
): Promise<{ ok: true; image: Uint8Array; cached: boolean } | { ok: false; error: string }> {
  const unit = kernelUnit();
  const who =
    compiler.kind === "nvcc"
      ? `nvcc ${await nvccVersion(compiler.nvcc)}`
      : `nvrtc ${compiler.library}`;
  const hash = createHash("sha256")
    .update(`${who}\0${arch}\0`)
    .update(unit)
    .digest("hex")
    .slice(0, 16);
  const path = join(cudaCacheDir(), `kernels-${arch}-${hash}.cubin`);
  if (existsSync(path))
    return { ok: true, image: new Uint8Array(readFileSync(path)), cached: true };
  let image: Uint8Array;
  if (compiler.kind === "nvcc") {
    const r = await compileWithNvcc(compiler.nvcc, [arch]);
    if (!r.ok) return r;
    image = r.image;
  } else {
    const options = [`--gpu-architecture=${arch}`, "-std=c++17"];
    if (compiler.include) options.push(`--include-path=${compiler.include}`);
    try {
      image = compiler.compile(unit, "looplm-kernels.cu", options);
    } catch (e) {
      return { ok: false, error: (e as Error).message.split("\n").slice(0, 2).join(" ") };
    }
  }
  writeAtomically(path, image);
  return { ok: true, image, cached: false };
}
