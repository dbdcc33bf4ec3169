/*
 * The compute backends. Starting one returns a value (ComputeBackend) that the commands pass to
 * training, evaluation, generation and forward. `portable` is the TypeScript + WebAssembly
 * kernels (what a browser without WebGPU runs), `native` the C kernels compiled from source on
 * this machine (native.ts), `webgpu` a GPU through WebGPU (Dawn in Node, the optional `webgpu`
 * package), `cuda` an NVIDIA GPU through the CUDA driver (@loop/cuda): on these two the tensors
 * live on the device (`caps.memory`), and what stays on the CPU uses the native kernels when they
 * build. Without a choice the best available CPU backend starts: native when it builds, else
 * portable. A backend chosen explicitly either starts or fails with its reason — never a silent
 * fall-back.
 *
 * Every backend has one factory shape (BackendFactory: options in, a started backend or the
 * reason it cannot start out), registered in BACKEND_TABLE, which `--backend` reads. A new
 * backend is one entry there.
 */
import { type CudaDevice, type CudaPrecision, cudaBackend, cudaCapabilities } from "@loop/cuda";
import { startCudaDevice } from "@loop/cuda/node";
import { cpuBackendOpsOn, cpuCapabilities, type ModelConfigInput } from "@loop/looped";
import type { BackendCapabilities, BackendOps, Precision } from "@loop/tensor";
import { type CpuKernels, currentKernels, nativeKernelNames } from "@loop/tensor/kernel";
import { nativeDisabled } from "@loop/tensor/node";
import type { TrainOptions } from "@loop/train";
import {
  type GpuContext,
  type GpuPrecision,
  gemmThroughput,
  gpuBackendOps,
  gpuCapabilities,
  isCpuEmulation,
  measureGpuPeak,
  setGpuPrecision,
} from "@loop/webgpu";
import { createNodeGpuContext, findVulkanDriver, type GpuFeature } from "@loop/webgpu/node";
import { CliError, choiceOption } from "./cli/errors.js";
import { dispatchFormula } from "./gpu-dispatches.js";
import { disableNativeKernels, enableNativeKernels } from "./native.js";

/**
 * A started backend: the value every command passes to training, evaluation, generation and
 * forward (nothing reads a "current backend"). What it can do is data (`caps`, @loop/tensor's
 * BackendCapabilities, derived by the backend's own package): the commands read that, never its
 * name.
 *
 * Its CPU kernels are a value too (`kernels`): the kernel sets and the GEMM that the kernel-set
 * registry held when it started (starting portable empties the registry, starting native or
 * a device backend fills it with the native kernels; `stop()` of those empties it again).
 * Everything a command computes on the CPU runs inside them (`withKernels`): `ops`
 * (`cpuBackendOpsOn`), each training step (`Trainer`), each evaluation batch, each generation,
 * so two CPU backends work side by side in one process, each on its own kernels, whichever
 * started last.
 */
export interface ComputeBackend {
  /** One of BACKENDS, or the name a backend module gives itself (`--backend-module`). */
  readonly name: string;
  /** What it has: memory, precisions, decoding, fused composites, features. */
  readonly caps: BackendCapabilities;
  /** Its ops at fp32: the model's, the tape's and the optimiser's, on its own tensors. */
  readonly ops: BackendOps<unknown, unknown>;
  /**
   * Its ops at `precision`, one of `caps.precisions` (any other is refused in one line naming
   * what it offers). cuda: a context at that precision on the same device (one each); webgpu: its
   * one device switched to it (every later GEMM of its ops runs at it, until the next call).
   */
  opsAt(precision: Precision): BackendOps<unknown, unknown>;
  /** The CPU kernels its CPU work runs on (a device backend: what stays on the CPU). */
  readonly kernels: CpuKernels;
  /** Release what it holds (its device; the native kernels). */
  stop(): void;
  /** Which driver it started on, in one line (webgpu on Linux: the Vulkan driver and loader). */
  readonly driver?: string;
  /** Every library and prebuilt piece it uses and every one not found, a line each (cuda). */
  readonly libraries?: readonly string[];
  /** The device's adapter, for `looplm check`'s report (webgpu). */
  readonly adapter?: AdapterReport;
  /** Measurements of its device that `looplm check` reports, where it offers them (webgpu). */
  readonly probes?: DeviceProbes;
}

/** A device adapter as `looplm check` reports it. */
export interface AdapterReport {
  name: string;
  /** A CPU emulation of a GPU (SwiftShader, lavapipe), not a GPU. */
  emulated: boolean;
  /** Its optional features, sorted. */
  features: string[];
  /** Its subgroup-matrix configurations. */
  subgroupMatrixConfigs: string[];
}

/** Measurements of a backend's device, without host transfers. */
export interface DeviceProbes {
  /** The fp32 peak in GFLOP/s, and how it was found. */
  peak(): Promise<{ gflops: number; source: string }>;
  /** GFLOP/s of an M×K·K×N product. */
  gemm(M: number, N: number, K: number): Promise<number>;
  /** Dispatches of a training step of `config`: per layer application, and the fixed part. */
  dispatches(
    config: ModelConfigInput,
    shape: { batch: number; seq: number },
    o: TrainOptions,
  ): Promise<{ perLayerApplication: number; fixed: number }>;
}

/** `p` on `b`, or the one-line refusal naming what `b` offers. */
export function checkPrecision(b: Pick<ComputeBackend, "name" | "caps">, p: Precision): void {
  if (!b.caps.precisions.includes(p))
    throw new CliError(
      `--precision ${p} is not offered by --backend ${b.name} (it offers ${b.caps.precisions.join(", ")})`,
    );
}

type Started = { ok: true; backend: ComputeBackend } | { ok: false; reason: string };

/** What starting a backend may be told (each backend reads what concerns it). */
export interface BackendOptions {
  /** Show what native libraries print while the backend starts (Dawn's adapter search). */
  verbose?: boolean;
  /** webgpu: features to unlock with Dawn's toggles (--gpu-features). */
  gpuFeatures?: readonly GpuFeature[];
  /** webgpu: start on a CPU emulation (SwiftShader) when no GPU driver exists. */
  allowEmulation?: boolean;
}

/** Makes a started backend from the options, or says why it cannot start. */
export type BackendFactory = (o: BackendOptions) => Promise<Started>;

/**
 * Point the Vulkan loader at the GPU's driver before Dawn first loads (the loader reads the
 * variable then): a driver list the user set is kept; one line says what was used.
 */
function chooseVulkanDriver(o: BackendOptions): string | undefined {
  if (process.platform !== "linux") return undefined;
  const d = findVulkanDriver({ allowEmulation: o.allowEmulation });
  if (d.driverFiles) process.env.VK_DRIVER_FILES = d.driverFiles;
  return d.line;
}

/** A CPU backend on the kernels the registry holds now: it keeps them whatever starts later. */
function cpu(name: Backend, stop: () => void): ComputeBackend {
  const kernels = currentKernels();
  const ops = cpuBackendOpsOn(kernels);
  const b: ComputeBackend = {
    name,
    caps: cpuCapabilities(kernels),
    ops,
    opsAt(p) {
      checkPrecision(b, p);
      return ops;
    },
    kernels,
    stop,
  };
  return b;
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

/**
 * The cuda backend on a started device (the driver's, the host emulator, a recording device):
 * its fp32 ops, and at tf32 or bf16 a context each on the same device. `stop` releases every
 * context's memory after `release()` (the device's own end).
 */
export function cudaComputeBackend(
  device: CudaDevice,
  o: { release?: () => void; libraries?: readonly string[] } = {},
): ComputeBackend {
  const main = cudaBackend(device);
  const others = new Map<Precision, ReturnType<typeof cudaBackend>>([["fp32", main]]);
  const b: ComputeBackend = {
    name: "cuda",
    caps: cudaCapabilities(device, main.ops),
    ops: main.ops,
    opsAt(p) {
      checkPrecision(b, p);
      let c = others.get(p);
      if (!c) others.set(p, (c = cudaBackend(device, { precision: p as CudaPrecision })));
      return c.ops;
    },
    kernels: currentKernels(),
    stop() {
      // the device's work first (within its time limit); then every context's memory back.
      // (Not after a failed wait: freeing memory a hung kernel still uses could block.)
      o.release?.();
      for (const c of others.values()) c.release();
    },
    ...(o.libraries ? { libraries: o.libraries } : {}),
  };
  return b;
}

/** The webgpu backend on `gpu`: its ops, its device's precision switch and measurements. */
function webgpuComputeBackend(gpu: GpuContext, stop: () => void, driver?: string): ComputeBackend {
  const ops = gpuBackendOps(gpu);
  const b: ComputeBackend = {
    name: "webgpu",
    caps: gpuCapabilities(gpu, ops),
    ops,
    opsAt(p) {
      checkPrecision(b, p);
      setGpuPrecision(gpu, p as GpuPrecision);
      return ops;
    },
    kernels: currentKernels(),
    stop,
    driver,
    adapter: {
      name: gpu.adapterName,
      emulated: isCpuEmulation(gpu.adapterName),
      features: gpu.adapter.features,
      subgroupMatrixConfigs: gpu.adapter.subgroupMatrixConfigs,
    },
    probes: {
      peak: () => measureGpuPeak(gpu, { minMs: 50 }),
      gemm: async (M, N, K) => (await gemmThroughput(gpu, M, N, K, { iters: 10 })).gflops,
      dispatches: (config, shape, o) => dispatchFormula(gpu, config, shape, o),
    },
  };
  return b;
}

/** The compute backends `--backend` and `startBackend` accept (BACKEND_TABLE's keys). */
export const BACKENDS = ["portable", "native", "webgpu", "cuda"] as const;
/** One compute backend's name: "portable", "native", "webgpu" or "cuda". */
export type Backend = (typeof BACKENDS)[number];

/** One backend's entry: its --help line, where its tensors live, and its factory. */
interface BackendEntry {
  readonly help: string;
  readonly memory: BackendCapabilities["memory"];
  readonly start: BackendFactory;
}

/** The compute backends, one entry each. A new backend is one entry here (and its name above). */
const BACKEND_TABLE: Record<Backend, BackendEntry> = {
  portable: {
    help: "TypeScript + WebAssembly kernels (what a browser without WebGPU runs)",
    memory: "host",
    start: async () => ({ ok: true, backend: startPortable() }),
  },
  native: {
    help: "C kernels compiled on this machine (needs a C compiler with OpenMP)",
    memory: "host",
    async start() {
      const r = await enableNativeKernels();
      return r.enabled
        ? { ok: true, backend: cpu("native", disableNativeKernels) }
        : { ok: false, reason: r.reason ?? "unknown reason" };
    },
  },
  webgpu: {
    help: "a GPU through WebGPU (needs the webgpu package and a GPU driver)",
    memory: "device",
    async start(o) {
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
      return { ok: true, backend: webgpuComputeBackend(gpu, stop, driver) };
    },
  },
  cuda: {
    help: "an NVIDIA GPU through CUDA (needs the driver, sm_80 or newer; nvcc or NVRTC where the kernels are not prebuilt)",
    memory: "device",
    async start() {
      const r = await startCudaDevice();
      if (!r.ok) return { ok: false, reason: r.reason };
      // What stays on the CPU runs on the native kernels when they build.
      await enableNativeKernels();
      const backend = cudaComputeBackend(r.device, {
        release: () => {
          disableNativeKernels();
          r.device.destroy();
        },
        libraries: r.info.libraries.map((l) => `${l.what}: ${l.path ?? "none"} — ${l.note}`),
      });
      return { ok: true, backend };
    },
  },
};

/** One line per backend, for --help. */
export const backendHelp = (b: Backend): string => BACKEND_TABLE[b].help;
/** Where `b`'s tensors live once started (known before it starts). */
export const backendMemory = (b: Backend): BackendCapabilities["memory"] => BACKEND_TABLE[b].memory;
/** The backends whose tensors live in the host's memory, as "--backend a or b". */
export const hostBackendsFlag = (): string =>
  `--backend ${BACKENDS.filter((b) => backendMemory(b) === "host").join(" or ")}`;

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
  o: BackendOptions = {},
): Promise<ComputeBackend> {
  if (choice !== undefined) {
    const r = await BACKEND_TABLE[choice].start(o);
    if (r.ok) return r.backend;
    disableNativeKernels();
    throw new CliError(`--backend ${choice} cannot start here: ${r.reason}`);
  }
  // the best CPU backend: native when it builds, else portable (which always starts)
  const r = await BACKEND_TABLE.native.start(o);
  if (r.ok) return r.backend;
  if (!nativeDisabled()) notice(`portable kernels (native ones unavailable: ${r.reason})`);
  return startPortable();
}
