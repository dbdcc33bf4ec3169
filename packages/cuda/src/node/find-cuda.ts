/*
 * Where the CUDA pieces of this machine are: the driver library, the compiler (nvcc, or NVRTC
 * loaded in process), the CUDA headers NVRTC needs and cuBLASLt. Each may be named by a setting:
 *   LOOPLM_CUDA_DRIVER  the driver library (default: libcuda.so.1 through the loader, then the
 *                       folders a container or a distribution puts it in, DRIVER_DIRS)
 *   LOOPLM_NVCC         nvcc (default $CUDA_HOME/bin/nvcc, $CUDA_PATH/bin/nvcc,
 *                       /usr/local/cuda/bin/nvcc, then nvcc on PATH); `0` uses NVRTC only
 *   LOOPLM_NVRTC        libnvrtc (default the toolkit's, every Python environment's CUDA wheels,
 *                       then libnvrtc.so.13/12 through the loader); `0`: none
 *   LOOPLM_CUBLASLT     libcublasLt (default the toolkit's, every Python environment's CUDA
 *                       wheels and torch/lib, then libcublasLt.so.13/12); `0`: the backend's own
 *                       GEMM kernels
 * A GPU node often has CUDA only inside Python: wheels put the libraries under
 * site-packages/nvidia/<part>/lib (CUDA 12) or nvidia/cu13/lib (CUDA 13), PyTorch its own under
 * torch/lib; the environments are those of the usual prefixes, of VIRTUAL_ENV/CONDA_PREFIX, of
 * pyenv and conda installs, and the site folders python3 itself reports (asked once, with a time
 * limit). Nothing is downloaded; a piece not found is answered as null or an empty list and the
 * caller names it.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";

/** The toolkit roots to look in, most specific first. */
export function cudaHomes(): string[] {
  const env = [process.env.CUDA_HOME, process.env.CUDA_PATH].filter((d): d is string => !!d);
  return [...new Set([...env, "/usr/local/cuda"])].filter((d) => existsSync(d));
}

const off = (v: string | undefined) => v === "0" || v === "off" || v === "false";

/**
 * Folders that hold the driver's libcuda.so.1 where the loader may not look: the NVIDIA
 * container runtime's mount, the distributions' library folders, WSL's.
 */
export const DRIVER_DIRS = [
  "/usr/local/nvidia/lib64",
  "/usr/local/nvidia/lib",
  "/usr/lib/x86_64-linux-gnu",
  "/lib/x86_64-linux-gnu",
  "/usr/lib64",
  "/lib64",
  "/usr/lib",
  "/usr/lib/wsl/lib",
] as const;

/**
 * The driver libraries to try, in order: the setting alone where there is one, else
 * libcuda.so.1 through the loader (LD_LIBRARY_PATH, ld.so.cache) and then each of DRIVER_DIRS
 * that has it (an `env -i` loses LD_LIBRARY_PATH; a container may not run ldconfig).
 */
export function driverCandidates(): string[] {
  const setting = process.env.LOOPLM_CUDA_DRIVER;
  if (setting) return [setting];
  const found = DRIVER_DIRS.map((d) => join(d, "libcuda.so.1")).filter((p) => existsSync(p));
  return ["libcuda.so.1", ...found];
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

function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Prefixes of Python installs: system, user, the active environment, pyenv and conda trees. */
function pythonPrefixes(): string[] {
  const home = homedir();
  const out = ["/usr", "/usr/local", join(home, ".local")];
  for (const v of [process.env.VIRTUAL_ENV, process.env.CONDA_PREFIX]) if (v) out.unshift(v);
  for (const root of [join(home, ".pyenv", "versions"), "/root/.pyenv/versions"])
    for (const e of entries(root)) out.push(join(root, e));
  for (const conda of ["/opt/conda", join(home, "miniconda3"), join(home, "anaconda3")]) {
    out.push(conda);
    for (const e of entries(join(conda, "envs"))) out.push(join(conda, "envs", e));
  }
  for (const e of entries("/opt")) out.push(join("/opt", e), join("/opt", e, "venv"));
  return out;
}

let askedPython: string[] | null = null;

/** The site folders python3 reports (sys.path), asked once with a 10 s limit; [] without it. */
function pythonSitePath(): string[] {
  if (askedPython) return askedPython;
  askedPython = [];
  if (off(process.env.LOOPLM_ASK_PYTHON)) return askedPython;
  const r = spawnSync("python3", ["-c", "import sys; print('\\n'.join(sys.path))"], {
    encoding: "utf8",
    timeout: 10_000,
  });
  if (r.status === 0)
    askedPython = r.stdout
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => /(site|dist)-packages$/.test(l));
  return askedPython;
}

/** The last walk of the Python environments, keyed by what it read from the environment. */
let sites: { key: string; dirs: string[] } | null = null;

/**
 * site-packages folders of every Python environment found (where CUDA wheels put nvidia/…).
 * One start asks for NVRTC, cuBLASLt and the headers: the folders are walked once per
 * environment (`VIRTUAL_ENV`, `CONDA_PREFIX`, `HOME`), not once per library.
 */
export function sitePackages(): string[] {
  const key = [process.env.VIRTUAL_ENV, process.env.CONDA_PREFIX, homedir()].join("\0");
  if (sites?.key !== key) sites = { key, dirs: walkSitePackages() };
  return sites.dirs;
}

function walkSitePackages(): string[] {
  const out: string[] = [];
  for (const prefix of pythonPrefixes())
    for (const lib of ["lib", "lib64"])
      for (const e of entries(join(prefix, lib)).filter((n) => n.startsWith("python3")))
        for (const sub of ["site-packages", "dist-packages"]) {
          const d = join(prefix, lib, e, sub);
          if (existsSync(d)) out.push(d);
        }
  for (const d of pythonSitePath()) if (existsSync(d)) out.push(d);
  return [...new Set(out)];
}

/** Library folders inside one site-packages: nvidia/<part>/lib (cu13 among them), torch/lib. */
function wheelLibDirs(site: string): string[] {
  const nvidia = join(site, "nvidia");
  const parts = entries(nvidia).sort((a, b) => (a === "cu13" ? -1 : b === "cu13" ? 1 : 0));
  return [...parts.map((p) => join(nvidia, p, "lib")), join(site, "torch", "lib")].filter((d) =>
    existsSync(d),
  );
}

/** The newest file in `dir` whose name is `prefix`.so or `prefix`.so.<version>. */
function libIn(dir: string, prefix: string): string | null {
  const hit = entries(dir)
    .filter((f) => f === `${prefix}.so` || f.startsWith(`${prefix}.so.`))
    .sort()
    .reverse()[0];
  return hit ? join(dir, hit) : null;
}

/** Candidates for a library: the setting, the toolkits, the Python environments, bare names. */
function libraryCandidates(setting: string | undefined, lib: string): string[] {
  if (off(setting)) return [];
  if (setting) return [setting];
  const out: string[] = [];
  for (const home of cudaHomes())
    for (const sub of ["lib64", "lib", join("targets", "x86_64-linux", "lib")]) {
      const p = libIn(join(home, sub), lib);
      if (p) out.push(p);
    }
  for (const site of sitePackages())
    for (const dir of wheelLibDirs(site)) {
      const p = libIn(dir, lib);
      if (p) out.push(p);
    }
  out.push(`${lib}.so.13`, `${lib}.so.12`, `${lib}.so`);
  return [...new Set(out)];
}

/** Where to look for NVRTC, in order (empty when LOOPLM_NVRTC=0). */
export function nvrtcCandidates(): string[] {
  return libraryCandidates(process.env.LOOPLM_NVRTC, "libnvrtc");
}

/** Where to look for cuBLASLt, in order (empty when LOOPLM_CUBLASLT=0). */
export function cublasLtCandidates(): string[] {
  return libraryCandidates(process.env.LOOPLM_CUBLASLT, "libcublasLt");
}

/** A folder holding cuda_bf16.h for NVRTC (the toolkit's, or a wheel's), or null. */
export function cudaIncludeDir(): string | null {
  for (const home of cudaHomes()) {
    const d = join(home, "include");
    if (existsSync(join(d, "cuda_bf16.h"))) return d;
  }
  for (const site of sitePackages())
    for (const part of ["cu13", "cuda_runtime"]) {
      const d = join(site, "nvidia", part, "include");
      if (existsSync(join(d, "cuda_bf16.h"))) return d;
    }
  return null;
}
