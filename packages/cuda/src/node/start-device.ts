/*
 * Start a CUDA device for the backend: build the driver addon, find a kernel compiler (nvcc or
 * NVRTC), open the driver and the GPU, compile the kernels for its architecture (cached), load
 * them, and open cuBLASLt where it is found. Whatever is missing comes back as one line naming
 * it — never a fall-back to another backend:
 *   "no CUDA driver: libcuda.so.1 could not be opened (…)", "no CUDA GPU: …",
 *   "no CUDA compiler: no nvcc (…) and no NVRTC (…)", "nvcc could not compile …".
 */
import type { CudaDevice, LtGemm } from "../device.js";
import { KERNEL_MAX_SHARED, KERNELS, type KernelName } from "../kernel-table.js";
import { buildDriverAddon, type DriverAddon } from "./build-addon.js";
import { type KernelCompiler, kernelImage } from "./compile-kernels.js";
import {
  cublasLtCandidates,
  cudaIncludeDir,
  driverLibrary,
  findNvcc,
  nvrtcCandidates,
} from "./find-cuda.js";

/** What was started. */
export interface CudaDeviceInfo {
  name: string;
  /** sm_XY */
  arch: string;
  sms: number;
  memoryBytes: number;
  /** The driver's CUDA version (12080: 12.8). */
  driverVersion: number;
  compiler: "nvcc" | "nvrtc";
  /** The cuBLASLt library in use, or why the backend's own GEMMs run. */
  gemm: { cublasLt: string } | { own: string };
  /** Whether the kernels came from the cache. */
  cachedKernels: boolean;
  /** The most dynamic shared memory a block may use (the SSD scans' state lives there). */
  sharedOptinBytes: number;
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
): { path: string } | { why: string } {
  const whys: string[] = [];
  for (const c of candidates) {
    const why = open(c);
    if (why === "") return { path: c };
    whys.push(why);
  }
  return { why: whys.length === 0 ? "switched off" : whys[whys.length - 1]! };
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

/** Start the GPU (see the file comment). */
export async function startCudaDevice(o: StartCudaOptions = {}): Promise<Started> {
  const built = await buildDriverAddon();
  if (!built.ok) return { ok: false, reason: built.error };
  const addon = built.addon;
  const compiler = findCompiler(addon);
  if ("why" in compiler) return { ok: false, reason: compiler.why };
  const ordinal = o.ordinal ?? Number(process.env.LOOPLM_CUDA_DEVICE ?? 0);
  let gpu: ReturnType<DriverAddon["start"]>;
  try {
    gpu = addon.start(driverLibrary(), ordinal);
  } catch (e) {
    return { ok: false, reason: messageOf(e) };
  }
  const arch = `sm_${gpu.major}${gpu.minor}`;
  if (gpu.major < 8)
    return {
      ok: false,
      reason: `the GPU ${gpu.name} is ${arch}; the CUDA backend needs sm_80 or newer (bf16 tensor cores)`,
    };
  const compiled = await kernelImage(compiler, arch);
  if (!compiled.ok) return { ok: false, reason: compiled.error };
  const fns = new Map<KernelName, number>();
  try {
    const module = addon.loadModule(compiled.image);
    for (const k of Object.keys(KERNELS) as KernelName[])
      fns.set(k, addon.getFunction(module, k, KERNEL_MAX_SHARED[k] ?? 0));
  } catch (e) {
    return { ok: false, reason: `loading the CUDA kernels failed: ${messageOf(e)}` };
  }
  const lt = openFirst(cublasLtCandidates(), (p) => addon.blasLtOpen(p));
  const ltGemm =
    "path" in lt
      ? (g: LtGemm) =>
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
          )
      : undefined;
  const name = `${gpu.name}, ${arch}`;
  const device: CudaDevice = {
    name,
    maxSharedBytes: gpu.sharedOptin,
    alloc: (bytes) => addon.alloc(bytes),
    free: (ptr) => addon.release(ptr),
    upload: (ptr, data) => addon.upload(ptr, data),
    zero: (ptr, bytes) => addon.zero(ptr, bytes),
    copy: (dst, src, bytes) => addon.copy(dst, src, bytes),
    read(ptr, bytes) {
      const ticket = addon.readStart(ptr, bytes);
      return new Promise((resolve, reject) => {
        const poll = () => {
          try {
            if (!addon.readDone(ticket)) return void setTimeout(poll, 0);
            const out = new Uint8Array(bytes);
            addon.readTake(ticket, out);
            resolve(out.buffer);
          } catch (e) {
            reject(e);
          }
        };
        poll();
      });
    },
    launch(kernel, grid, block, shared, args) {
      const fn = fns.get(kernel);
      if (fn === undefined) throw new Error(`cuda: no kernel ${kernel}`);
      addon.launch(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, args);
    },
    ...(ltGemm ? { ltGemm } : {}),
    destroy: () => addon.synchronize(),
  };
  return {
    ok: true,
    device,
    info: {
      name: gpu.name,
      arch,
      sms: gpu.sms,
      memoryBytes: gpu.memory,
      driverVersion: gpu.driver,
      compiler: compiler.kind,
      gemm: "path" in lt ? { cublasLt: lt.path } : { own: lt.why },
      cachedKernels: compiled.cached,
      sharedOptinBytes: gpu.sharedOptin,
    },
  };
}
