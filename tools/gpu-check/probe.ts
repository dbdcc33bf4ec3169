/**
 * Everything the diagnosis looks at, as plain data: what Dawn found, and the pieces a Linux GPU
 * machine needs for Dawn to find its GPU (the Vulkan loader, an ICD file naming the GPU's Vulkan
 * driver, the NVIDIA container setting). Gathered from the machine by system-probe.ts; built by
 * hand in the tests, so the diagnosis is checked without a GPU.
 */
import type { AdapterListing } from "./list-adapters.js";

export interface Probe {
  /** `process.platform`: the loader and ICD checks are Linux's. */
  platform: string;
  listing: AdapterListing;
  /** Where libvulkan.so.1 was found (ldconfig's cache or a library folder), or null. */
  vulkanLoader: string | null;
  /** The folders searched for it, for the message when it is missing. */
  loaderDirs: string[];
  /** ICD files (*.json) in the loader's default folders. */
  icdFiles: string[];
  /** The folders searched for ICD files. */
  icdDirs: string[];
  /** VK_DRIVER_FILES or VK_ICD_FILENAMES when set (the first wins, as in the loader). */
  icdOverride: { name: string; files: string[]; missing: string[] } | null;
  /** Known NVIDIA ICD files outside the loader's folders (the container toolkit's mounts). */
  strayIcdFiles: string[];
  /** The NVIDIA kernel driver, when one is loaded: its version line and device nodes. */
  nvidia: { version: string | null; devices: string[] } | null;
  /** NVIDIA_DRIVER_CAPABILITIES when set (the NVIDIA container toolkit reads it). */
  nvidiaDriverCapabilities: string | null;
  /** SwiftShader's ICD file (Debian's chromium package), when present. */
  swiftshaderIcd: string | null;
}
