/*
 * `@loop/webgpu/node`: a GPU context in Node through Dawn (the optional `webgpu` package, which
 * ships prebuilt binaries). Dawn needs a Vulkan driver (Linux), Metal (macOS) or D3D12 (Windows).
 * On a Linux machine without a GPU, Google's SwiftShader driver (shipped in Debian's `chromium`
 * package) works: VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json — correct, slow.
 *
 * Dawn and the Vulkan loader write straight to the process's stderr while they look for an
 * adapter (missing XDG_RUNTIME_DIR, "Found no drivers", a C++ source line), which no JavaScript
 * can silence. So the search first runs in a child process whose output is captured: with no
 * adapter the caller gets one clean sentence (and the captured text through `onNativeOutput`,
 * which the CLI shows with --verbose); only when an adapter exists does Dawn start in this
 * process.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import type { GpuContext } from "../gpu-context.js";
import { requestGpuContext } from "../request-gpu-context.js";
import { dawnFlags, type GpuFeature, SUBGROUP_MATRIX } from "./gpu-features.js";
import { SWIFTSHADER_ICD } from "./vulkan-driver.js";

export { dawnFlags, GPU_FEATURES, type GpuFeature, parseGpuFeatures } from "./gpu-features.js";
export {
  type DriverSearch,
  findVulkanDriver,
  type IcdFile,
  SWIFTSHADER_ICD,
  type VulkanDriver,
} from "./vulkan-driver.js";

/** The npm package that provides WebGPU (Dawn) in Node, an optional peer dependency. */
export const WEBGPU_PACKAGE = "webgpu";

interface DawnModule {
  create(flags: string[]): GPU;
}

async function loadDawn(): Promise<DawnModule> {
  try {
    return (await import(WEBGPU_PACKAGE)) as DawnModule;
  } catch (e) {
    const why = e instanceof Error ? e.message.split("\n")[0] : String(e);
    throw new Error(
      `webgpu: the WebGPU backend in Node needs the optional package "${WEBGPU_PACKAGE}": install it with npm install ${WEBGPU_PACKAGE} (${why})`,
    );
  }
}

/** What to try when no adapter is found, for the error message. */
export function adapterHint(): string {
  if (process.platform !== "linux") return "is a GPU driver installed?";
  if (
    !existsSync("/usr/lib/x86_64-linux-gnu/libvulkan.so.1") &&
    !existsSync("/usr/lib/aarch64-linux-gnu/libvulkan.so.1")
  )
    return "Dawn needs the Vulkan loader: apt-get install libvulkan1";
  if (process.env.VK_ICD_FILENAMES)
    return `VK_ICD_FILENAMES=${process.env.VK_ICD_FILENAMES} gave no adapter`;
  if (existsSync(SWIFTSHADER_ICD))
    return `no Vulkan GPU driver; for the CPU fallback set VK_ICD_FILENAMES=${SWIFTSHADER_ICD}`;
  return "no Vulkan driver; install your GPU's Vulkan driver (or Debian's chromium package for SwiftShader)";
}

/**
 * Runs in the probe's process: argv[1] the webgpu module's file URL, argv[2] the power
 * preference, argv[3] Dawn's flags (JSON).
 */
const PROBE_SCRIPT = `
const [, url, powerPreference, flags] = process.argv;
const dawn = await import(url);
const adapter = await dawn.create(JSON.parse(flags)).requestAdapter({ powerPreference });
process.stdout.write(JSON.stringify({ found: adapter != null }) + "\\n");
process.exit(0);
`;

/** What a Dawn adapter probe found, and what Dawn and the drivers printed meanwhile. */
export interface AdapterProbe {
  /** Whether Dawn found an adapter; null when the probe itself could not run or answer. */
  found: boolean | null;
  /** What Dawn and the drivers printed meanwhile (stdout's answer excluded). */
  output: string;
}

/** Look for an adapter in a child process, capturing what the native libraries print. */
export function probeNodeAdapter(
  powerPreference: GPUPowerPreference = "high-performance",
  flags: readonly string[] = [],
): Promise<AdapterProbe> {
  let path: string;
  try {
    path = createRequire(import.meta.url).resolve(WEBGPU_PACKAGE);
  } catch {
    return Promise.resolve({ found: null, output: "" });
  }
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        PROBE_SCRIPT,
        pathToFileURL(path).href,
        powerPreference,
        JSON.stringify(flags),
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString("utf8");
    });
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString("utf8");
    });
    // A driver that hangs must not hang the command: after a minute the probe counts as failed.
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", () => {
      clearTimeout(timer);
      resolve({ found: null, output: err });
    });
    child.on("close", () => {
      clearTimeout(timer);
      const m = /\{"found":(true|false)\}/.exec(out);
      resolve({ found: m ? m[1] === "true" : null, output: err });
    });
  });
}

/**
 * A context on Dawn's first adapter; one sentence naming what is missing when there is none.
 * `onNativeOutput` hears what Dawn printed while looking (nothing reaches stderr otherwise).
 */
export async function createNodeGpuContext(
  opts: {
    powerPreference?: GPUPowerPreference;
    onNativeOutput?: (text: string) => void;
    /** GPU features to unlock with Dawn's toggles (see `dawnFlags`). */
    features?: readonly GpuFeature[];
  } = {},
): Promise<GpuContext> {
  const dawn = await loadDawn();
  const flags = dawnFlags(opts.features ?? []);
  const probe = await probeNodeAdapter(opts.powerPreference, flags);
  if (probe.output.trim() !== "") opts.onNativeOutput?.(probe.output);
  const hint = adapterHint();
  if (probe.found === false) throw new Error(`webgpu: no GPU adapter was found (${hint})`);
  // (found, or the probe could not tell: ask here, as without it)
  const gpu = dawn.create(flags);
  return requestGpuContext(gpu, {
    powerPreference: opts.powerPreference,
    hint,
    extraFeatures: (opts.features ?? []).includes("subgroup-matrix") ? [SUBGROUP_MATRIX] : [],
  });
}
