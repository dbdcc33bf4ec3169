/*
 * Finding the GPU's Vulkan driver before Dawn starts. Cluster and cloud nodes mount the NVIDIA
 * driver where the Vulkan loader does not look (`/usr/local/nvidia/...`, a versioned
 * `/usr/lib/x86_64-linux-gnu/nvidia*` folder), sometimes with no ICD file at all; and Debian's
 * SwiftShader sits in `/usr/lib/chromium`, outside the loader's folders too. So the search here:
 *
 * 1. a driver list the caller set (`VK_DRIVER_FILES`, `VK_ICD_FILENAMES`) is kept as it is;
 * 2. else every ICD file in the loader's own folders and in the container mounts, split into GPU
 *    drivers and CPU emulations (SwiftShader, lavapipe/llvmpipe), by name and library;
 * 3. else, where `libGLX_nvidia.so.0` exists without an ICD file, an ICD file written to a
 *    temporary folder that points at it (the NVIDIA library is its own Vulkan ICD);
 * 4. else an emulation, only when allowed, and always named as one.
 *
 * The result is the `VK_DRIVER_FILES` to set (GPU drivers only, so that the loader never picks an
 * emulation beside a GPU) and one line saying what was used. The loader itself (`libvulkan.so.1`)
 * is looked up too: the offline bundle's launcher puts its own copy on the library path when the
 * system has none and names it in LOOPLM_BUNDLED_VULKAN_LOADER, which is reported as such.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

/** Debian's SwiftShader (the `chromium` package), the emulation CI and the tests use. */
export const SWIFTSHADER_ICD = "/usr/lib/chromium/vk_swiftshader_icd.json";

const EMULATED = /swiftshader|lvp|lavapipe|llvmpipe/i;

/** Where container runtimes and driver installers put NVIDIA's ICD file and libraries. */
const NVIDIA_MOUNTS = [
  "/usr/local/nvidia/share/vulkan/icd.d",
  "/usr/local/nvidia/etc/vulkan/icd.d",
  "/usr/local/nvidia/lib64",
  "/usr/local/nvidia/lib",
];

/** The folders the loader (and a glibc system) keeps libraries in. */
const LIB_DIRS = [
  "/lib/x86_64-linux-gnu",
  "/usr/lib/x86_64-linux-gnu",
  "/usr/lib64",
  "/lib64",
  "/usr/lib",
  "/usr/local/lib",
  "/usr/local/nvidia/lib64",
  "/usr/local/nvidia/lib",
];

/** One ICD file found, and whether it drives a CPU emulation. */
export interface IcdFile {
  path: string;
  library: string;
  emulated: boolean;
}

/** What `findVulkanDriver` chose. */
export interface VulkanDriver {
  /** The value for VK_DRIVER_FILES, or null to leave the environment as it is. */
  driverFiles: string | null;
  /** Whether the chosen driver is a CPU emulation (SwiftShader, lavapipe). */
  emulated: boolean;
  /** Whether a GPU driver (not an emulation) was found. */
  gpu: boolean;
  /** The Vulkan loader found ("bundled: …" for the offline bundle's own), or null. */
  loader: string | null;
  /** Every ICD file seen, GPU drivers first. */
  icdFiles: IcdFile[];
  /** An ICD file written for a driver that came without one, or null. */
  written: string | null;
  /** One line: what was used, or what is missing. */
  line: string;
}

/** Where to look; the tests pass a fake root. */
export interface DriverSearch {
  env?: NodeJS.ProcessEnv;
  /** Prefix of every absolute path searched (default "", the real file system). */
  root?: string;
  /** Where to write an ICD file for a driver without one (default: a new temporary folder). */
  writeDir?: () => string;
  /** Accept a CPU emulation when no GPU driver exists. */
  allowEmulation?: boolean;
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

function readIcd(path: string): IcdFile | null {
  try {
    const j = JSON.parse(readFileSync(path, "utf8")) as { ICD?: { library_path?: string } };
    const library = j.ICD?.library_path;
    if (typeof library !== "string") return null;
    return { path, library, emulated: EMULATED.test(library) || EMULATED.test(path) };
  } catch {
    return null;
  }
}

/** The loader's default ICD folders on Linux (its docs, "Linux Driver Discovery"). */
function icdDirs(env: NodeJS.ProcessEnv): string[] {
  const config = (env.XDG_CONFIG_DIRS || "/etc/xdg").split(":").filter((d) => d);
  const data = (env.XDG_DATA_DIRS || "/usr/local/share:/usr/share").split(":").filter((d) => d);
  return [
    ...config.map((d) => join(d, "vulkan/icd.d")),
    "/usr/local/etc/vulkan/icd.d",
    "/etc/vulkan/icd.d",
    ...data.map((d) => join(d, "vulkan/icd.d")),
    "/usr/share/vulkan/icd.d",
    join(env.HOME || homedir(), ".local/share/vulkan/icd.d"),
  ];
}

/** `/usr/lib/x86_64-linux-gnu/nvidia*` and the folders under it (Debian's nvidia/current). */
function nvidiaLibDirs(root: string): string[] {
  const base = "/usr/lib/x86_64-linux-gnu";
  const out: string[] = [];
  for (const name of listDir(root + base).filter((n) => n.startsWith("nvidia"))) {
    const dir = `${base}/${name}`;
    out.push(dir);
    for (const sub of listDir(root + dir)) out.push(`${dir}/${sub}`);
  }
  return out;
}

/** Every ICD file in the searched folders, GPU drivers first, each once. */
function findIcds(env: NodeJS.ProcessEnv, root: string): IcdFile[] {
  const dirs = [...new Set([...icdDirs(env), ...NVIDIA_MOUNTS, ...nvidiaLibDirs(root)])];
  const seen = new Set<string>();
  const found: IcdFile[] = [];
  for (const dir of dirs)
    for (const name of listDir(root + dir)) {
      if (!name.endsWith(".json")) continue;
      const path = `${root}${dir}/${name}`;
      if (seen.has(path)) continue;
      seen.add(path);
      const icd = readIcd(path);
      if (icd) found.push(icd);
    }
  const swiftshader = root + SWIFTSHADER_ICD;
  if (!seen.has(swiftshader) && existsSync(swiftshader)) {
    const icd = readIcd(swiftshader);
    if (icd) found.push(icd);
  }
  return [...found.filter((f) => !f.emulated), ...found.filter((f) => f.emulated)];
}

function firstFile(root: string, dirs: readonly string[], name: string): string | null {
  for (const d of dirs) if (existsSync(`${root}${d}/${name}`)) return `${root}${d}/${name}`;
  return null;
}

/**
 * The Vulkan loader the process loads: the offline bundle's when its launcher put it on the
 * library path (it does so only where the system has none, and names it in
 * LOOPLM_BUNDLED_VULKAN_LOADER), else the system's, else null.
 */
function findLoader(env: NodeJS.ProcessEnv, root: string): string | null {
  const bundled = env.LOOPLM_BUNDLED_VULKAN_LOADER;
  if (bundled && existsSync(bundled)) return `bundled: ${bundled}`;
  const ld = (env.LD_LIBRARY_PATH ?? "").split(":").filter((d) => d);
  return firstFile(root, [...ld, ...LIB_DIRS], "libvulkan.so.1");
}

/** The ICD file that makes NVIDIA's GLX library (its Vulkan driver too) visible to the loader. */
function nvidiaIcdJson(library: string): string {
  return `${JSON.stringify({ file_format_version: "1.0.1", ICD: { library_path: library, api_version: "1.3.0" } }, null, 2)}\n`;
}

/** Find the Vulkan driver to use (see the file comment); touches nothing but a written ICD file. */
export function findVulkanDriver(search: DriverSearch = {}): VulkanDriver {
  const env = search.env ?? process.env;
  const root = search.root ?? "";
  const loader = findLoader(env, root);
  const loaderPart = loader ? `loader ${loader}` : "no Vulkan loader (libvulkan.so.1)";
  const icdFiles = findIcds(env, root);
  const base = { loader, icdFiles, written: null };
  const override = env.VK_DRIVER_FILES
    ? "VK_DRIVER_FILES"
    : env.VK_ICD_FILENAMES
      ? "VK_ICD_FILENAMES"
      : null;
  if (override) {
    const files = env[override]!;
    const emulated = EMULATED.test(files);
    return {
      ...base,
      driverFiles: null,
      emulated,
      gpu: !emulated,
      line: `Vulkan driver: ${override}=${files} as set${emulated ? " (a CPU emulation)" : ""}; ${loaderPart}`,
    };
  }
  const gpus = icdFiles.filter((f) => !f.emulated);
  if (gpus.length > 0) {
    const files = gpus.map((f) => f.path).join(":");
    return {
      ...base,
      driverFiles: files,
      emulated: false,
      gpu: true,
      line: `Vulkan driver: ${gpus.map((f) => `${f.path} (${f.library})`).join(", ")}; ${loaderPart}`,
    };
  }
  const glx = firstFile(root, [...LIB_DIRS, ...nvidiaLibDirs(root)], "libGLX_nvidia.so.0");
  if (glx) {
    const dir = search.writeDir?.() ?? mkdtempSync(join(tmpdir(), "looplm-vulkan-"));
    const path = join(dir, "nvidia_icd.json");
    writeFileSync(path, nvidiaIcdJson(glx));
    return {
      ...base,
      written: path,
      driverFiles: path,
      emulated: false,
      gpu: true,
      line: `Vulkan driver: ${glx} through an ICD file written to ${path} (the driver came without one); ${loaderPart}`,
    };
  }
  const emulations = icdFiles.filter((f) => f.emulated);
  if (search.allowEmulation && emulations.length > 0) {
    const chosen = emulations[0]!;
    return {
      ...base,
      driverFiles: chosen.path,
      emulated: true,
      gpu: false,
      line: `Vulkan driver: no GPU driver found; the CPU emulation ${chosen.path} (emulated: not a GPU); ${loaderPart}`,
    };
  }
  return {
    ...base,
    driverFiles: null,
    emulated: false,
    gpu: false,
    line:
      `Vulkan driver: no GPU driver found (no ICD file in the loader's folders, ${NVIDIA_MOUNTS[0]} or /usr/lib/x86_64-linux-gnu/nvidia*, no libGLX_nvidia.so.0)` +
      `${emulations.length > 0 ? `; the CPU emulation ${emulations[0]!.path} is there (--allow-emulation)` : ""}; ${loaderPart}`,
  };
}
