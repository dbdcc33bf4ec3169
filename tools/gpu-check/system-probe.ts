/** The probe of probe.ts, read from this machine. */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { listAdapters } from "./list-adapters.js";
import type { Probe } from "./probe.js";

export const SWIFTSHADER_ICD = "/usr/lib/chromium/vk_swiftshader_icd.json";

/** The Vulkan loader's default ICD folders on Linux (its docs, "Linux Driver Discovery"). */
function icdDirs(env: NodeJS.ProcessEnv): string[] {
  const config = (env.XDG_CONFIG_DIRS || "/etc/xdg").split(":");
  const data = (env.XDG_DATA_DIRS || "/usr/local/share:/usr/share").split(":");
  const home = env.HOME || homedir();
  const dirs = [
    ...config.map((d) => join(d, "vulkan/icd.d")),
    "/usr/local/etc/vulkan/icd.d",
    "/etc/vulkan/icd.d",
    ...data.map((d) => join(d, "vulkan/icd.d")),
    "/usr/share/vulkan/icd.d",
    join(home, ".local/share/vulkan/icd.d"),
  ];
  return [...new Set(dirs)];
}

/** Where the NVIDIA container toolkit or a runfile install may leave the ICD file instead. */
const STRAY_NVIDIA_ICDS = [
  "/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json",
  "/usr/local/share/vulkan/icd.d/nvidia_icd.json",
  "/etc/vulkan/icd.d/nvidia_icd.json",
  "/usr/share/vulkan/icd.d/nvidia_icd.json",
];

const LOADER_DIRS = [
  "/lib/x86_64-linux-gnu",
  "/usr/lib/x86_64-linux-gnu",
  "/lib/aarch64-linux-gnu",
  "/usr/lib/aarch64-linux-gnu",
  "/usr/lib64",
  "/lib64",
  "/usr/lib",
  "/usr/local/lib",
];

function jsonFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith(".json"))
      .sort()
      .map((f) => join(dir, f));
  } catch {
    return [];
  }
}

function findLoader(dirs: string[]): string | null {
  try {
    const cache = execFileSync("ldconfig", ["-p"], { encoding: "utf8", timeout: 10_000 });
    const m = /libvulkan\.so\.1 [^\n]*=> (\S+)/.exec(cache);
    if (m) return m[1]!;
  } catch {
    // no ldconfig (or not allowed): the folders below
  }
  for (const d of dirs) if (existsSync(join(d, "libvulkan.so.1"))) return join(d, "libvulkan.so.1");
  return null;
}

function nvidia(): Probe["nvidia"] {
  let version: string | null = null;
  try {
    version = readFileSync("/proc/driver/nvidia/version", "utf8").split("\n")[0]!.trim();
  } catch {
    version = null;
  }
  let devices: string[] = [];
  try {
    devices = readdirSync("/dev")
      .filter((f) => /^nvidia\d+$/.test(f))
      .map((f) => `/dev/${f}`);
  } catch {
    devices = [];
  }
  return version === null && devices.length === 0 ? null : { version, devices };
}

/** Read the machine, with Dawn's search run under `env`. */
export async function probeSystem(env: NodeJS.ProcessEnv): Promise<Probe> {
  const loaderDirs = [...(env.LD_LIBRARY_PATH ?? "").split(":").filter((d) => d), ...LOADER_DIRS];
  const dirs = icdDirs(env);
  const overrideName = env.VK_DRIVER_FILES
    ? "VK_DRIVER_FILES"
    : env.VK_ICD_FILENAMES
      ? "VK_ICD_FILENAMES"
      : null;
  const overrideFiles = overrideName ? (env[overrideName] ?? "").split(":").filter((f) => f) : [];
  const icdFiles = [...new Set(dirs.flatMap(jsonFiles))];
  return {
    platform: process.platform,
    listing: await listAdapters(env),
    vulkanLoader: process.platform === "linux" ? findLoader(loaderDirs) : null,
    loaderDirs,
    icdFiles,
    icdDirs: dirs,
    icdOverride: overrideName
      ? {
          name: overrideName,
          files: overrideFiles,
          missing: overrideFiles.filter((f) => !existsSync(f)),
        }
      : null,
    strayIcdFiles: STRAY_NVIDIA_ICDS.filter((f) => existsSync(f) && !icdFiles.includes(f)),
    nvidia: nvidia(),
    nvidiaDriverCapabilities: env.NVIDIA_DRIVER_CAPABILITIES ?? null,
    swiftshaderIcd: existsSync(SWIFTSHADER_ICD) ? SWIFTSHADER_ICD : null,
  };
}
