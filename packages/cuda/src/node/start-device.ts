/*
 * Start a CUDA device for the backend: load the driver addon (prebuilt, else built), open the
 * driver (libcuda.so.1 through the loader, then the folders it is kept in), the GPU, its
 * kernels (the prebuilt fatbin where it covers the GPU, else compiled for its architecture by
 * nvcc or NVRTC and cached) and cuBLASLt where it is found. Whatever is missing comes back as
 * one line naming it — never a fall-back to another backend:
 *   "no CUDA driver: libcuda.so.1 could not be opened (…)", "no CUDA GPU: …",
 *   "no CUDA compiler: no nvcc (…) and no NVRTC (…)", "nvcc could not compile …".
 * `info.libraries` names every piece used and every one not found.
 *
 * The device never waits without a time limit (LOOPLM_CUDA_TIMEOUT seconds, default 120): a
 * read that the GPU does not answer in time fails naming the read and the last kernel launched.
 * LOOPLM_CUDA_SYNC=1 waits after every launch, so a fault names the kernel that caused it
 * (slower: for finding a failing kernel, not for speed).
 */
import type { CudaDevice, LtGemm } from "../device.js";
import { KERNEL_MAX_SHARED, KERNELS, type KernelName } from "../kernel-table.js";
import { type AddonOrigin, buildDriverAddon, type DriverAddon } from "./build-addon.js";
import { type KernelCompiler, kernelImage } from "./compile-kernels.js";
import { fatbinCovers } from "./fatbin.js";
import {
  cublasLtCandidates,
  cudaIncludeDir,
  DRIVER_DIRS,
  driverCandidates,
  findNvcc,
  nvrtcCandidates,
} from "./find-cuda.js";
import { prebuiltKernels } from "./prebuilt.js";

/** One piece the device uses, where it came from, or why it is not there. */
export interface CudaLibrary {
  /** "driver addon", "CUDA driver", "kernels", "cuBLASLt". */
  what: string;
  /** The file used, or null where none was found. */
  path: string | null;
  /** How it was found or made, or what runs instead. */
  note: string;
}

/** What was started. */
export interface CudaDeviceInfo {
  name: string;
  /** sm_XY */
  arch: string;
  sms: number;
  memoryBytes: number;
  /** The driver's CUDA version (12080: 12.8). */
  driverVersion: number;
  /** Where the kernels came from: the prebuilt fatbin, or a compiler on this machine. */
  compiler: "prebuilt" | "nvcc" | "nvrtc";
  /** The cuBLASLt library in use, or why the backend's own GEMMs run. */
  gemm: { cublasLt: string } | { own: string };
  /** Whether the kernels came from the cache (or were prebuilt). */
  cachedKernels: boolean;
  /** The most dynamic shared memory a block may use (the SSD scans' state lives there). */
  sharedOptinBytes: number;
  /** Every piece used and every one not found (see CudaLibrary). */
  libraries: CudaLibrary[];
  /** The wait limit in seconds, and whether every launch is waited for (LOOPLM_CUDA_SYNC). */
  timeoutS: number;
  syncEveryLaunch: boolean;
}

/** Options of `startCudaDevice`. */
export interface StartCudaOptions {
  /** The GPU's ordinal (default `LOOPLM_CUDA_DEVICE`, else 0). */
  ordinal?: number;
}

type Started =
  | { ok: true; device: CudaDevice; info: CudaDeviceInfo }
  | { ok: false; reason: string };

/** The first library of `candidates` that `open` accepts ("" = opened), or every reason. */
function openFirst(
  candidates: readonly string[],
  open: (p: string) => string,
): { path: string } | { why: string; whys: string[] } {
  const whys: string[] = [];
  for (const c of candidates) {
    const why = open(c);
    if (why === "") return { path: c };
    whys.push(why);
  }
  return { why: whys.length === 0 ? "switched off" : whys[whys.length - 1]!, whys };
}

function findCompiler(addon: DriverAddon): KernelCompiler | { why: string } {
  const nvcc = findNvcc();
  if (nvcc) return { kind: "nvcc", nvcc };
  const rtc = openFirst(nvrtcCandidates(), (p) => addon.nvrtcOpen(p));
  if ("path" in rtc)
    return {
      kind: "nvrtc",
      library: rtc.path,
      include: cudaIncludeDir(),
      compile: (s, n, o) => addon.nvrtcCompile(s, n, o),
    };
  const nvccWhere = process.env.LOOPLM_NVCC
    ? `LOOPLM_NVCC=${process.env.LOOPLM_NVCC}`
    : "not in CUDA_HOME, /usr/local/cuda/bin or PATH";
  return { why: `no CUDA compiler: no nvcc (${nvccWhere}) and no NVRTC (${rtc.why})` };
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e)).split("\n")[0]!;

/** The wait limit in seconds (LOOPLM_CUDA_TIMEOUT), or a one-line refusal. */
function timeoutSeconds(): number | string {
  const v = process.env.LOOPLM_CUDA_TIMEOUT;
  if (v === undefined || v === "") return 120;
  const s = Number(v);
  return Number.isFinite(s) && s > 0 && s <= 86_400
    ? s
    : `LOOPLM_CUDA_TIMEOUT must be seconds between 0 and 86400, got "${v}"`;
}

function addonLine(origin: AddonOrigin): CudaLibrary {
  return "prebuilt" in origin
    ? { what: "driver addon", path: origin.prebuilt, note: "prebuilt (no compiler used)" }
    : {
        what: "driver addon",
        path: origin.built,
        note: origin.cached ? "built by cc earlier (cached)" : "built by cc now",
      };
}

/** Start the GPU (see the file comment). */
export async function startCudaDevice(o: StartCudaOptions = {}): Promise<Started> {
  const timeoutS = timeoutSeconds();
  if (typeof timeoutS === "string") return { ok: false, reason: timeoutS };
  const built = await buildDriverAddon();
  if (!built.ok) return { ok: false, reason: built.error };
  const addon = built.addon;
  const libraries: CudaLibrary[] = [addonLine(built.origin)];
  // The prebuilt kernels need no compiler; without them the compiler is looked for first, so a
  // machine without one is told so whether or not it has a GPU.
  const prebuilt = prebuiltKernels();
  let compiler: KernelCompiler | null = null;
  if (!prebuilt) {
    const c = findCompiler(addon);
    if ("why" in c) return { ok: false, reason: c.why };
    compiler = c;
  }
  const candidates = driverCandidates();
  const driver = openFirst(candidates, (p) => addon.driverOpen(p));
  if (!("path" in driver)) {
    const looked = process.env.LOOPLM_CUDA_DRIVER
      ? ""
      : candidates.length > 1
        ? `; ${candidates.slice(1).join(", ")} did not open either (${driver.whys.slice(1).join("; ")})`
        : `; not in ${DRIVER_DIRS.join(", ")} either`;
    return { ok: false, reason: `${driver.whys[0] ?? driver.why}${looked}` };
  }
  libraries.push({
    what: "CUDA driver",
    path: driver.path,
    note: driver.path.includes("/") ? "opened from its folder" : "through the loader",
  });
  const ordinal = o.ordinal ?? Number(process.env.LOOPLM_CUDA_DEVICE ?? 0);
  let gpu: ReturnType<DriverAddon["start"]>;
  try {
    gpu = addon.start(ordinal);
  } catch (e) {
    return { ok: false, reason: messageOf(e) };
  }
  const arch = `sm_${gpu.major}${gpu.minor}`;
  if (gpu.major < 8)
    return {
      ok: false,
      reason: `the GPU ${gpu.name} is ${arch}; the CUDA backend needs sm_80 or newer (bf16 tensor cores)`,
    };
  let image: Uint8Array;
  let cachedKernels = true;
  const covers = prebuilt ? fatbinCovers(prebuilt.contents, arch) : null;
  if (prebuilt && covers) {
    image = prebuilt.image;
    libraries.push({
      what: "kernels",
      path: prebuilt.path,
      note: `prebuilt fatbin (${[...prebuilt.contents.sass, ...prebuilt.contents.ptx].join(", ")}): ${covers}`,
    });
  } else {
    if (!compiler) {
      const c = findCompiler(addon);
      if ("why" in c)
        return {
          ok: false,
          reason: `the prebuilt kernels have no code for ${arch}, and ${c.why}`,
        };
      compiler = c;
    }
    const compiled = await kernelImage(compiler, arch);
    if (!compiled.ok) return { ok: false, reason: compiled.error };
    image = compiled.image;
    cachedKernels = compiled.cached;
    libraries.push({
      what: "kernels",
      path: compiler.kind === "nvcc" ? compiler.nvcc : compiler.library,
      note: `compiled for ${arch} by ${compiler.kind}${compiled.cached ? " (cached)" : ""}`,
    });
  }
  const fns = new Map<KernelName, number>();
  try {
    const module = addon.loadModule(image);
    for (const k of Object.keys(KERNELS) as KernelName[])
      fns.set(k, addon.getFunction(module, k, KERNEL_MAX_SHARED[k] ?? 0));
  } catch (e) {
    return { ok: false, reason: `loading the CUDA kernels failed: ${messageOf(e)}` };
  }
  const ltCandidates = cublasLtCandidates();
  const lt = openFirst(ltCandidates, (p) => addon.blasLtOpen(p));
  libraries.push(
    "path" in lt
      ? { what: "cuBLASLt", path: lt.path, note: "the GEMMs run on it" }
      : {
          what: "cuBLASLt",
          path: null,
          note: `not found (${ltCandidates.length ? `tried ${ltCandidates.join(", ")}: ${lt.why}` : "LOOPLM_CUBLASLT=0"}): the GEMMs run on the backend's own kernels`,
        },
  );
  const device = driverDevice(addon, fns, {
    name: `${gpu.name}, ${arch}`,
    maxSharedBytes: gpu.sharedOptin,
    timeoutMs: timeoutS * 1000,
    sync: process.env.LOOPLM_CUDA_SYNC === "1",
    cublasLt: "path" in lt,
  });
  return {
    ok: true,
    device,
    info: {
      name: gpu.name,
      arch,
      sms: gpu.sms,
      memoryBytes: gpu.memory,
      driverVersion: gpu.driver,
      compiler: compiler ? compiler.kind : "prebuilt",
      gemm: "path" in lt ? { cublasLt: lt.path } : { own: lt.why },
      cachedKernels,
      sharedOptinBytes: gpu.sharedOptin,
      libraries,
      timeoutS,
      syncEveryLaunch: process.env.LOOPLM_CUDA_SYNC === "1",
    },
  };
}

interface DeviceOptions {
  name: string;
  maxSharedBytes: number;
  timeoutMs: number;
  /** Wait after every launch, so a fault names its kernel. */
  sync: boolean;
  cublasLt: boolean;
}

/** A CudaDevice over the addon (see the file comment for the waits). */
export function driverDevice(
  addon: DriverAddon,
  fns: ReadonlyMap<KernelName, number>,
  o: DeviceOptions,
): CudaDevice {
  let last = "nothing yet";
  const seconds = `${o.timeoutMs / 1000} s`;
  const hint = o.sync ? "" : "; LOOPLM_CUDA_SYNC=1 names the kernel that failed";
  /** Wait for everything enqueued, within the limit; `what` names it in the error. */
  const waitFor = (what: string) => {
    let done: boolean;
    try {
      done = addon.waitWithin(o.timeoutMs);
    } catch (e) {
      throw new Error(`cuda: ${what} failed: ${messageOf(e)}${hint}`);
    }
    if (!done)
      throw new Error(
        `cuda: ${what} did not finish within ${seconds} (a kernel may hang; LOOPLM_CUDA_TIMEOUT sets the limit)`,
      );
  };
  return {
    name: o.name,
    maxSharedBytes: o.maxSharedBytes,
    alloc: (bytes) => addon.alloc(bytes),
    free: (ptr) => addon.release(ptr),
    upload: (ptr, data) => addon.upload(ptr, data),
    zero: (ptr, bytes) => addon.zero(ptr, bytes),
    copy: (dst, src, bytes) => addon.copy(dst, src, bytes),
    read(ptr, bytes) {
      const ticket = addon.readStart(ptr, bytes);
      const after = last;
      const t0 = performance.now();
      return new Promise((resolve, reject) => {
        const poll = () => {
          try {
            if (!addon.readDone(ticket)) {
              if (performance.now() - t0 > o.timeoutMs) {
                addon.readCancel(ticket);
                return reject(
                  new Error(
                    `cuda: a read of ${bytes} bytes waited ${seconds} for the GPU (the last launch before it: ${after}); a kernel may hang (LOOPLM_CUDA_TIMEOUT sets the limit)`,
                  ),
                );
              }
              return void setTimeout(poll, 0);
            }
            const out = new Uint8Array(bytes);
            addon.readTake(ticket, out);
            resolve(out.buffer);
          } catch (e) {
            reject(
              new Error(
                `cuda: ${messageOf(e)} (a read of ${bytes} bytes; the last launch before it: ${after})${hint}`,
              ),
            );
          }
        };
        poll();
      });
    },
    launch(kernel, grid, block, shared, args) {
      const fn = fns.get(kernel);
      if (fn === undefined) throw new Error(`cuda: no kernel ${kernel}`);
      addon.launch(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, args);
      last = `kernel ${kernel}`;
      if (o.sync) waitFor(last);
    },
    ...(o.cublasLt
      ? {
          ltGemm(g: LtGemm) {
            const ran =
              addon.blasLtGemm(
                g.transA ? 1 : 0,
                g.transB ? 1 : 0,
                g.M,
                g.N,
                g.K,
                g.alpha,
                g.a,
                g.b,
                g.beta,
                g.c,
                g.abType,
                g.compute,
              ) === 0;
            if (ran) {
              last = `cublasLtMatmul ${g.M}x${g.N}x${g.K}`;
              if (o.sync) waitFor(last);
            }
            return ran;
          },
        }
      : {}),
    destroy: () => waitFor("the work left at the device's release"),
  };
}
