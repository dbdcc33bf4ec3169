/*
 * The compute backends. Starting one returns a value (ComputeBackend) that the commands pass to
 * training, evaluation, generation and forward. `portable` is the TypeScript + WebAssembly
 * kernels (what a browser without WebGPU runs), `native` the C kernels compiled from source on
 * this machine (native.ts), `webgpu` a GPU through WebGPU (Dawn in Node, the optional `webgpu`
 * package), `cuda` an NVIDIA GPU through the CUDA driver (@loop/cuda): on these two the commands
 * run the model's steps on the device (`ComputeBackend.onDevice`), and what stays on the CPU
 * uses the native kernels when they build. Without a choice the best
 * available CPU backend starts: native when it builds, else portable. A backend chosen
 * explicitly either starts or fails with its reason — never a silent fall-back.
 *
 * A new backend is one entry of BACKENDS and of STARTERS below.
 */
import { CUDA_PRECISIONS, cudaBackend, isCudaPrecision } from "@loop/cuda";
import { startCudaDevice } from "@loop/cuda/node";
import { cpuBackendOpsOn } from "@loop/looped";
import type { BackendOps, Precision } from "@loop/tensor";
import { type CpuKernels, currentKernels, nativeKernelNames } from "@loop/tensor/kernel";
import { nativeDisabled } from "@loop/tensor/node";
import { GPU_PRECISIONS, type GpuContext, gpuBackendOps } from "@loop/webgpu";
import { createNodeGpuContext, findVulkanDriver, type GpuFeature } from "@loop/webgpu/node";
import { CliError, choiceOption } from "./cli/errors.js";
import { disableNativeKernels, enableNativeKernels } from "./native.js";

/** The compute backends `--backend` and `startBackend` accept. */
export const BACKENDS = ["portable", "native", "webgpu", "cuda"] as const;
/** One compute backend's name: "portable", "native", "webgpu" or "cuda". */
export type Backend = (typeof BACKENDS)[number];

/** One line per backend, for --help. */
export const BACKEND_HELP: Record<Backend, string> = {
  portable: "TypeScript + WebAssembly kernels (what a browser without WebGPU runs)",
  native: "C kernels compiled on this machine (needs a C compiler with OpenMP)",
  webgpu: "a GPU through WebGPU (needs the webgpu package and a GPU driver)",
  cuda: "an NVIDIA GPU through CUDA (needs the driver, sm_80 or newer; nvcc or NVRTC where the kernels are not prebuilt)",
};

/**
 * A started backend: the value every command passes to training, evaluation, generation and
 * forward (nothing reads a "current backend"). `gpu` is its device where it has one (webgpu).
 *
 * Its CPU kernels are a value too (`kernels`): the kernel sets and the GEMM that the kernel-set
 * registry held when it started (starting portable empties the registry, starting native or
 * webgpu fills it with the native kernels; `stop()` of those two empties it again). Everything a
 * command computes on the CPU runs inside them (`withKernels`): `ops` (`cpuBackendOpsOn`), each
 * training step (`Trainer`), each evaluation batch, each generation, so two CPU backends work
 * side by side in one process, each on its own kernels, whichever started last.
 */
export interface ComputeBackend {
  readonly name: Backend;
  /** The device of the webgpu backend, else null. */
  readonly gpu: GpuContext | null;
  /** Whether its ops compute on a device (webgpu, cuda): the commands run the model there. */
  readonly onDevice: boolean;
  /** The precisions it offers (@loop/tensor's PRECISIONS); `--precision` refuses the others. */
  readonly precisions: readonly Precision[];
  /** Its ops: the model's, the tape's and the optimiser's, on its own tensors. */
  readonly ops: BackendOps<unknown, unknown>;
  /** The CPU kernels its CPU work runs on (webgpu: what stays on the CPU). */
  readonly kernels: CpuKernels;
  /** Release what it holds (its device; the native kernels). */
  stop(): void;
  /** webgpu on Linux: which Vulkan driver and loader it started on, in one line. */
  readonly driver?: string;
  /**
   * cuda: its ops on the same device at another of its precisions (tf32, bf16 tensor cores), for
   * training at `--precision` and for `looplm check`'s GEMM-bearing cases at each (webgpu
   * switches its one device's precision instead: setGpuPrecision).
   */
  readonly opsAt?: (precision: Precision) => BackendOps<unknown, unknown>;
  /** cuda: every library and prebuilt piece it uses and every one not found, a line each. */
  readonly libraries?: readonly string[];
  /** cuda: what its GEMMs run on, "cuBLASLt" or "own kernels" (no cuBLASLt found). */
  readonly gemmEngine?: "cuBLASLt" | "own kernels";
}

type Started = { ok: true; backend: ComputeBackend } | { ok: false; reason: string };

interface StartOptions {
  /** Show what native libraries print while the backend starts (Dawn's adapter search). */
  verbose?: boolean;
  /** webgpu: features to unlock with Dawn's toggles (--gpu-features). */
  gpuFeatures?: readonly GpuFeature[];
  /** webgpu: start on a CPU emulation (SwiftShader) when no GPU driver exists. */
  allowEmulation?: boolean;
}

/**
 * Point the Vulkan loader at the GPU's driver before Dawn first loads (the loader reads the
 * variable then): a driver list the user set is kept; one line says what was used.
 */
function chooseVulkanDriver(o: StartOptions): string | undefined {
  if (process.platform !== "linux") return undefined;
  const d = findVulkanDriver({ allowEmulation: o.allowEmulation });
  if (d.driverFiles) process.env.VK_DRIVER_FILES = d.driverFiles;
  return d.line;
}

/** A CPU backend on the kernels the registry holds now: it keeps them whatever starts later. */
function cpu(name: Backend, stop: () => void): ComputeBackend {
  const kernels = currentKernels();
  return {
    name,
    gpu: null,
    onDevice: false,
    precisions: ["fp32"],
    ops: cpuBackendOpsOn(kernels),
    kernels,
    stop,
  };
}

/**
 * The CPU backend the kernel-set registry holds now, started by no one (a command run without
 * the CLI's set-up, as the in-process tests build the program): native when native kernels are
 * registered, else portable; its stop() leaves them as they are.
 */
export function cpuBackendAsIs(): ComputeBackend {
  return cpu(nativeKernelNames().length > 0 ? "native" : "portable", () => {});
}

function startPortable(): ComputeBackend {
  disableNativeKernels();
  return cpu("portable", () => {});
}

/** How each backend starts. */
const STARTERS: Record<Backend, (o: StartOptions) => Promise<Started>> = {
  portable: async () => ({ ok: true, backend: startPortable() }),
  async native() {
    const r = await enableNativeKernels();
    return r.enabled
      ? { ok: true, backend: cpu("native", disableNativeKernels) }
      : { ok: false, reason: r.reason ?? "unknown reason" };
  },
  async webgpu(o) {
    let gpu: GpuContext;
    const driver = chooseVulkanDriver(o);
    try {
      gpu = await createNodeGpuContext({
        onNativeOutput: o.verbose ? (text) => process.stderr.write(text) : undefined,
        features: o.gpuFeatures,
      });
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      return { ok: false, reason: driver ? `${why}; ${driver}` : why };
    }
    // What stays on the CPU runs on the native kernels when they build.
    await enableNativeKernels();
    const stop = () => {
      disableNativeKernels();
      gpu.destroy();
    };
    const ops = gpuBackendOps(gpu);
    return {
      ok: true,
      backend: {
        name: "webgpu",
        gpu,
        onDevice: true,
        precisions: GPU_PRECISIONS,
        ops,
        kernels: currentKernels(),
        stop,
        driver,
      },
    };
  },
  async cuda() {
    const r = await startCudaDevice();
    if (!r.ok) return { ok: false, reason: r.reason };
    // What stays on the CPU runs on the native kernels when they build.
    await enableNativeKernels();
    // fp32 ops; opsAt gives the same device's at tf32 or bf16 (one context each)
    const main = cudaBackend(r.device);
    const others = new Map<Precision, ReturnType<typeof cudaBackend>>([["fp32", main]]);
    const stop = () => {
      disableNativeKernels();
      // the device's work first (within its time limit); then every context's memory back.
      // (Not after a failed wait: freeing memory a hung kernel still uses could block.)
      r.device.destroy();
      for (const b of others.values()) b.release();
    };
    const opsAt = (p: Precision) => {
      if (!isCudaPrecision(p))
        throw new CliError(
          `--precision ${p} is not offered by --backend cuda (it offers ${CUDA_PRECISIONS.join(", ")})`,
        );
      let b = others.get(p);
      if (!b) others.set(p, (b = cudaBackend(r.device, { precision: p })));
      return b.ops;
    };
    const ops = main.ops;
    const libraries = r.info.libraries.map((l) => `${l.what}: ${l.path ?? "none"} — ${l.note}`);
    return {
      ok: true,
      backend: {
        name: "cuda",
        gpu: null,
        onDevice: true,
        precisions: CUDA_PRECISIONS,
        ops,
        kernels: currentKernels(),
        stop,
        opsAt,
        libraries,
        gemmEngine: "cublasLt" in r.info.gemm ? "cuBLASLt" : "own kernels",
      },
    };
  },
};

/** `v` as a backend name, or a one-line error listing the choices. */
export const parseBackend = choiceOption<Backend>("--backend", BACKENDS);

/**
 * Start `choice`, or (undefined) the best CPU backend that starts; `notice` hears one line when
 * the default cannot use its first preference (unless the user switched the native kernels off
 * with LOOPLM_NATIVE=0). Resolves to the started backend; an explicit choice that cannot start
 * rejects with a CliError naming why (and leaves the kernel-set registry portable).
 */
export async function startBackend(
  choice: Backend | undefined,
  notice: (line: string) => void = () => {},
  o: StartOptions = {},
): Promise<ComputeBackend> {
  if (choice !== undefined) {
    const r = await STARTERS[choice](o);
    if (r.ok) return r.backend;
    disableNativeKernels();
    throw new CliError(`--backend ${choice} cannot start here: ${r.reason}`);
  }
  // the best CPU backend: native when it builds, else portable (which always starts)
  const r = await STARTERS.native(o);
  if (r.ok) return r.backend;
  if (!nativeDisabled()) notice(`portable kernels (native ones unavailable: ${r.reason})`);
  return startPortable();
}
