/*
 * Where the CUDA pieces of this machine are: the driver library, the compiler (nvcc, or NVRTC
 * loaded in process), the CUDA headers NVRTC needs and cuBLASLt. Each may be named by a setting:
 *   LOOPLM_CUDA_DRIVER  the driver library (default libcuda.so.1 from the loader's search path)
 *   LOOPLM_NVCC         nvcc (default $CUDA_HOME/bin/nvcc, $CUDA_PATH/bin/nvcc,
 *                       /usr/local/cuda/bin/nvcc, then nvcc on PATH); `0` uses NVRTC only
 *   LOOPLM_NVRTC        libnvrtc (default the toolkit's, a Python wheel's nvidia/cuda_nvrtc,
 *                       then libnvrtc.so.13/12 from the loader's path); `0`: none
 *   LOOPLM_CUBLASLT     libcublasLt (default the toolkit's, a Python wheel's nvidia/cublas,
 *                       then libcublasLt.so.13/12); `0`: the backend's own GEMM kernels
 * Nothing is downloaded; a piece not found is answered as null and the caller names it.
 */
import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";

/** The toolkit roots to look in, most specific first. */
export function cudaHomes(): string[] {
  const env = [process.env.CUDA_HOME, process.env.CUDA_PATH].filter((d): d is string => !!d);
  return [...new Set([...env, "/usr/local/cuda"])].filter((d) => existsSync(d));
}

const off = (v: string | undefined) => v === "0" || v === "off" || v === "false";

/** The driver library to open. */
export function driverLibrary(): string {
  return process.env.LOOPLM_CUDA_DRIVER || "libcuda.so.1";
}

/** nvcc's path, or null (LOOPLM_NVCC=0, or none found). */
export function findNvcc(): string | null {
  const env = process.env.LOOPLM_NVCC;
  if (off(env)) return null;
  if (env) return existsSync(env) ? env : null;
  for (const home of cudaHomes()) {
    const p = join(home, "bin", "nvcc");
    if (existsSync(p)) return p;
  }
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const p = join(dir, "nvcc");
    if (dir && existsSync(p)) return p;
  }
  return null;
}

/** site-packages folders of the usual Python installs (where CUDA wheels put nvidia/…). */
function sitePackages(): string[] {
  const roots = ["/usr/lib", "/usr/local/lib", join(homedir(), ".local", "lib")];
  if (process.env.VIRTUAL_ENV) roots.unshift(join(process.env.VIRTUAL_ENV, "lib"));
  if (process.env.CONDA_PREFIX) roots.unshift(join(process.env.CONDA_PREFIX, "lib"));
  const out: string[] = [];
  for (const root of roots) {
    let entries: string[] = [];
    try {
      entries = readdirSync(root).filter((e) => e.startsWith("python3"));
    } catch {
      continue;
    }
    for (const e of entries)
      for (const sub of ["site-packages", "dist-packages"]) {
        const d = join(root, e, sub);
        if (existsSync(d)) out.push(d);
      }
  }
  return out;
}

/** The first file in `dir` whose name starts with `prefix` (libfoo.so, libfoo.so.12, …). */
function libIn(dir: string, prefix: string): string | null {
  try {
    const hit = readdirSync(dir)
      .filter((f) => f.startsWith(prefix))
      .sort()
      .reverse()[0];
    return hit ? join(dir, hit) : null;
  } catch {
    return null;
  }
}

/** Candidates for a library: the setting, the toolkits, the wheels, then bare names. */
function libraryCandidates(setting: string | undefined, lib: string, wheel: string): string[] {
  if (off(setting)) return [];
  if (setting) return [setting];
  const out: string[] = [];
  for (const home of cudaHomes())
    for (const sub of ["lib64", "lib", join("targets", "x86_64-linux", "lib")]) {
      const p = libIn(join(home, sub), `${lib}.so`);
      if (p) out.push(p);
    }
  for (const site of sitePackages()) {
    const p = libIn(join(site, "nvidia", wheel, "lib"), `${lib}.so`);
    if (p) out.push(p);
  }
  out.push(`${lib}.so.13`, `${lib}.so.12`, `${lib}.so`);
  return out;
}

/** Where to look for NVRTC, in order (empty when LOOPLM_NVRTC=0). */
export function nvrtcCandidates(): string[] {
  return libraryCandidates(process.env.LOOPLM_NVRTC, "libnvrtc", "cuda_nvrtc");
}

/** Where to look for cuBLASLt, in order (empty when LOOPLM_CUBLASLT=0). */
export function cublasLtCandidates(): string[] {
  return libraryCandidates(process.env.LOOPLM_CUBLASLT, "libcublasLt", "cublas");
}

/** A folder holding cuda_bf16.h for NVRTC (the toolkit's, or a wheel's), or null. */
export function cudaIncludeDir(): string | null {
  for (const home of cudaHomes()) {
    const d = join(home, "include");
    if (existsSync(join(d, "cuda_bf16.h"))) return d;
  }
  for (const site of sitePackages()) {
    const d = join(site, "nvidia", "cuda_runtime", "include");
    if (existsSync(join(d, "cuda_bf16.h"))) return d;
  }
  return null;
}
