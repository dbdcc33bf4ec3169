/**
 * `@loop/webgpu/node`: a GPU context in Node through Dawn (the optional `webgpu` package, which
 * ships prebuilt binaries). Dawn needs a Vulkan driver (Linux), Metal (macOS) or D3D12 (Windows).
 * On a Linux machine without a GPU, Google's SwiftShader driver (shipped in Debian's `chromium`
 * package) works: VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json — correct, slow.
 */
import { existsSync } from "node:fs";
import { type GpuContext, requestGpuContext } from "../gpu-context.js";

export const WEBGPU_PACKAGE = "webgpu";
const SWIFTSHADER_ICD = "/usr/lib/chromium/vk_swiftshader_icd.json";

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

/** A context on Dawn's first adapter; one sentence naming what is missing when there is none. */
export async function createNodeGpuContext(
  opts: { powerPreference?: GPUPowerPreference } = {},
): Promise<GpuContext> {
  const dawn = await loadDawn();
  const gpu = dawn.create([]);
  return requestGpuContext(gpu, { ...opts, hint: adapterHint() });
}
