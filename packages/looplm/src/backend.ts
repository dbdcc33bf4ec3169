/**
 * The compute backend of a run, chosen once per process: every kernel of every package runs on
 * it. `portable` is the TypeScript + WebAssembly kernels (what a browser without WebGPU runs),
 * `native` the C kernels compiled from source on this machine (native.ts), `webgpu` a GPU through
 * WebGPU (Dawn in Node, the optional `webgpu` package): the commands then run the model's steps
 * on the device (`gpuContext()`), and what stays on the CPU uses the native kernels when they
 * build. Without a choice the best available CPU backend runs: native when it builds, else
 * portable. A backend chosen explicitly either starts or fails with its reason — never a silent
 * fall-back.
 *
 * A new backend is one entry of BACKENDS and of STARTERS below.
 */
import { nativeDisabled } from "@loop/tensor/node";
import type { GpuContext } from "@loop/webgpu";
import { createNodeGpuContext } from "@loop/webgpu/node";
import { CliError } from "./cli/errors.js";
import { disableNativeKernels, enableNativeKernels } from "./native.js";

export const BACKENDS = ["portable", "native", "webgpu"] as const;
export type Backend = (typeof BACKENDS)[number];

/** One line per backend, for --help. */
export const BACKEND_HELP: Record<Backend, string> = {
  portable: "TypeScript + WebAssembly kernels (what a browser without WebGPU runs)",
  native: "C kernels compiled on this machine (needs a C compiler with OpenMP)",
  webgpu: "a GPU through WebGPU (needs the webgpu package and a GPU driver)",
};

let gpu: GpuContext | null = null;

/** The device of the webgpu backend while it is the active one, else null. */
export function gpuContext(): GpuContext | null {
  return active === "webgpu" ? gpu : null;
}

type Started = { ok: true } | { ok: false; reason: string };

/** How each backend switches on and off (switching one on switches the others off first). */
interface StartOptions {
  /** Show what native libraries print while the backend starts (Dawn's adapter search). */
  verbose?: boolean;
}

const STARTERS: Record<Backend, { start(o: StartOptions): Promise<Started>; stop(): void }> = {
  portable: { start: async () => ({ ok: true }), stop: () => {} },
  native: {
    async start() {
      const r = await enableNativeKernels();
      return r.enabled ? { ok: true } : { ok: false, reason: r.reason ?? "unknown reason" };
    },
    stop: disableNativeKernels,
  },
  webgpu: {
    async start(o) {
      try {
        gpu ??= await createNodeGpuContext({
          onNativeOutput: o.verbose ? (text) => process.stderr.write(text) : undefined,
        });
      } catch (e) {
        return { ok: false, reason: e instanceof Error ? e.message : String(e) };
      }
      // What stays on the CPU (evaluation, checkpoints) runs on the native kernels when they build.
      await enableNativeKernels();
      return { ok: true };
    },
    stop() {
      disableNativeKernels();
      gpu?.destroy();
      gpu = null;
    },
  },
};

let active: Backend = "portable";

/** The backend the kernels run on now, as startBackend last set it. */
export function activeBackend(): Backend {
  return active;
}

/** `v` as a backend name, or a one-line error listing the choices. */
export function parseBackend(v: string): Backend {
  if (!(BACKENDS as readonly string[]).includes(v))
    throw new CliError(`--backend must be one of ${BACKENDS.join(", ")}, got "${v}"`);
  return v as Backend;
}

async function switchTo(b: Backend, o: StartOptions = {}): Promise<Started> {
  // (started again even when active: enableNativeKernels may have been undone since)
  if (b !== active) STARTERS[active].stop();
  active = "portable";
  const r = await STARTERS[b].start(o);
  if (r.ok) active = b;
  return r;
}

/**
 * Run every kernel on `choice`, or (undefined) on the best CPU backend that starts; `notice`
 * hears one line when the default cannot use its first preference (unless the user switched the
 * native kernels off with LOOPLM_NATIVE=0). Resolves to the backend now in use; an explicit
 * choice that cannot start rejects with a CliError naming why.
 */
export async function startBackend(
  choice: Backend | undefined,
  notice: (line: string) => void = () => {},
  o: StartOptions = {},
): Promise<Backend> {
  if (choice !== undefined) {
    const r = await switchTo(choice, o);
    if (!r.ok) throw new CliError(`--backend ${choice} cannot start here: ${r.reason}`);
    return choice;
  }
  // the best CPU backend: native when it builds, else portable (which always starts)
  const r = await switchTo("native");
  if (r.ok) return "native";
  if (!nativeDisabled()) notice(`portable kernels (native ones unavailable: ${r.reason})`);
  await switchTo("portable");
  return "portable";
}
