/**
 * The compute backend of a run, chosen once per process: every kernel of every package runs on
 * it. `portable` is the TypeScript + WebAssembly kernels (what a browser without WebGPU runs),
 * `native` the C kernels compiled from source on this machine (native.ts). Without a choice the
 * best available CPU backend runs: native when it builds, else portable. A backend chosen
 * explicitly either starts or fails with its reason — never a silent fall-back.
 *
 * A new backend is one entry of BACKENDS and of STARTERS below.
 */
import { nativeDisabled } from "@loop/tensor/node";
import { CliError } from "./cli/errors.js";
import { disableNativeKernels, enableNativeKernels } from "./native.js";

export const BACKENDS = ["portable", "native"] as const;
export type Backend = (typeof BACKENDS)[number];

/** One line per backend, for --help. */
export const BACKEND_HELP: Record<Backend, string> = {
  portable: "TypeScript + WebAssembly kernels (what a browser without WebGPU runs)",
  native: "C kernels compiled on this machine (needs a C compiler with OpenMP)",
};

type Started = { ok: true } | { ok: false; reason: string };

/** How each backend switches on and off (switching one on switches the others off first). */
const STARTERS: Record<Backend, { start(): Promise<Started>; stop(): void }> = {
  portable: { start: async () => ({ ok: true }), stop: () => {} },
  native: {
    async start() {
      const r = await enableNativeKernels();
      return r.enabled ? { ok: true } : { ok: false, reason: r.reason ?? "unknown reason" };
    },
    stop: disableNativeKernels,
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

async function switchTo(b: Backend): Promise<Started> {
  // (started again even when active: enableNativeKernels may have been undone since)
  if (b !== active) STARTERS[active].stop();
  active = "portable";
  const r = await STARTERS[b].start();
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
): Promise<Backend> {
  if (choice !== undefined) {
    const r = await switchTo(choice);
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
