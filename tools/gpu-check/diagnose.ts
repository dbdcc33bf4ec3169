/**
 * The verdict on a machine, a pure function of the probe: which adapter the check runs on, or
 * one line for each thing that keeps Dawn from the GPU (the Vulkan loader, the GPU's ICD file,
 * the container setting), and whether a CPU emulation is refused. A GPU machine whose real driver
 * failed to load, where Dawn silently fell back to SwiftShader, is named as such.
 */
import { type AdapterInfo, adapterName, isEmulation } from "./adapter-info.js";
import type { Probe } from "./probe.js";

export interface Diagnosis {
  /** gpu: a real GPU; emulation: a CPU emulation, allowed; refused; no-adapter. */
  verdict: "gpu" | "emulation" | "refused" | "no-adapter";
  /** The adapter the suites and benchmarks use (Dawn's high-performance one), if any. */
  adapter: AdapterInfo | null;
  /** What stops the check, one line each. */
  problems: string[];
  /** What the check goes on despite, one line each (printed and in the report). */
  warnings: string[];
  /** Whether the suites and benchmarks run. */
  proceed: boolean;
  /**
   * No adapter, --allow-emulation, SwiftShader installed and no driver chosen by the caller:
   * the caller may search again with VK_ICD_FILENAMES pointing at SwiftShader.
   */
  retryWithSwiftshader: boolean;
}

const hasGraphics = (caps: string) =>
  caps
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .some((c) => c === "graphics" || c === "all");

function nvidiaLabel(n: NonNullable<Probe["nvidia"]>): string {
  const version = n.version?.match(/Kernel Module\s+(\S+)/)?.[1];
  const parts = [version ? `driver ${version}` : null, n.devices.join(", ") || null];
  return parts.filter((p) => p).join(", ");
}

/** Each missing piece between Dawn and the GPU's Vulkan driver on Linux, one line each. */
export function missingPieces(p: Probe): string[] {
  if (p.platform !== "linux") return [];
  const lines: string[] = [];
  if (p.vulkanLoader === null)
    lines.push(
      `Vulkan loader: libvulkan.so.1 not found (ldconfig's cache, ${p.loaderDirs.join(", ")}): apt-get install -y libvulkan1`,
    );
  const o = p.icdOverride;
  if (o && o.missing.length > 0)
    lines.push(`Vulkan driver: ${o.name} names ${o.missing.join(", ")}, which does not exist`);
  const icds = o ? o.files.filter((f) => !o.missing.includes(f)) : p.icdFiles;
  if (!o && icds.length === 0)
    lines.push(
      `Vulkan driver: no ICD file in ${p.icdDirs.join(", ")} and neither VK_ICD_FILENAMES nor VK_DRIVER_FILES is set: install the GPU's Vulkan driver${p.swiftshaderIcd ? ` (for the CPU emulation: VK_ICD_FILENAMES=${p.swiftshaderIcd})` : ""}`,
    );
  if (p.nvidia) {
    const isNvidiaIcd = (f: string) => /nvidia/i.test(f.split("/").pop() ?? "");
    if (!icds.some(isNvidiaIcd)) {
      const where = o ? `among ${o.name}'s files` : `in ${p.icdDirs.join(", ")}`;
      const stray = p.strayIcdFiles[0];
      lines.push(
        `NVIDIA GPU present (${nvidiaLabel(p.nvidia)}) but no nvidia_icd.json ${where}: the driver's Vulkan part is not installed or not mounted${stray ? `; there is ${stray}: VK_ICD_FILENAMES=${stray}` : ""}`,
      );
    }
    if (o && icds.some((f) => /swiftshader/i.test(f)))
      lines.push(
        `${o.name}=${o.files.join(":")} selects SwiftShader, a CPU emulation, on a machine with an NVIDIA GPU: unset it`,
      );
  }
  const caps = p.nvidiaDriverCapabilities;
  if (caps !== null && !hasGraphics(caps))
    lines.push(
      `container: NVIDIA_DRIVER_CAPABILITIES=${caps} lacks graphics, so the NVIDIA container toolkit mounts no Vulkan driver: start the container with -e NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics (or all)`,
    );
  return lines;
}

/**
 * What Dawn and the Vulkan loader said, for a search that found nothing, in words: their
 * distinct messages without the "Warning:" prefixes and without the stack frames that point into
 * Dawn's sources (a path on the machine that built Dawn tells the user nothing), led by the
 * plain reason where the loader found no driver that loads.
 */
function dawnSaid(p: Pick<Probe, "listing">): string {
  const lines = [...p.listing.errors, ...p.listing.nativeOutput.split("\n")]
    .map((s) => s.trim().replace(/^(Warning|Error|Info):\s*/i, ""))
    .filter((s) => s && !/^at\s/.test(s) && !/\.(cpp|cc|c|h|mm):\d+/.test(s));
  const said = [...new Set(lines)];
  const noDriver = said.some((s) => /Found no drivers|VK_ERROR_INCOMPATIBLE_DRIVER/.test(s));
  const last = said.slice(-3).join("; ");
  if (noDriver) return `: no Vulkan driver on this machine loads${last ? ` (${last})` : ""}`;
  return last ? ` (${last})` : "";
}

export function diagnose(p: Probe, opts: { allowEmulation: boolean }): Diagnosis {
  const warnings: string[] = [];
  const none = (problems: string[], retry = false): Diagnosis => ({
    verdict: "no-adapter",
    adapter: null,
    problems,
    warnings,
    proceed: false,
    retryWithSwiftshader: retry,
  });
  if (!p.listing.dawn.loaded) return none([`WebGPU: ${p.listing.dawn.error}`]);
  const adapter =
    p.listing.adapters.find((a) => a.requestedAs === "high-performance") ??
    p.listing.adapters[0] ??
    null;
  const missing = missingPieces(p);
  if (!adapter) {
    const problems =
      missing.length > 0
        ? missing
        : [
            `WebGPU: Dawn found no adapter${dawnSaid(p)}${p.platform === "linux" ? "" : ": is a GPU driver installed?"}`,
          ];
    const retry = opts.allowEmulation && p.swiftshaderIcd !== null && p.icdOverride === null;
    return none(problems, retry);
  }
  const name = adapterName(adapter);
  if (!isEmulation(adapter))
    return {
      verdict: "gpu",
      adapter,
      problems: [],
      warnings: missing,
      proceed: true,
      retryWithSwiftshader: false,
    };
  // A CPU emulation. On a machine with an NVIDIA GPU that is the driver failing, said first.
  const fellBack = p.nvidia
    ? [
        `Dawn fell back to "${name}", a CPU emulation, on a machine with an NVIDIA GPU (${nvidiaLabel(p.nvidia)}): the GPU's Vulkan driver did not load`,
        ...missing,
      ]
    : [];
  if (!opts.allowEmulation)
    return {
      verdict: "refused",
      adapter,
      problems: [
        ...fellBack,
        `refused: the adapter "${name}" is a CPU emulation of a GPU, whose figures say nothing about a GPU; pass --allow-emulation to check correctness on it`,
      ],
      warnings,
      proceed: false,
      retryWithSwiftshader: false,
    };
  return {
    verdict: "emulation",
    adapter,
    problems: [],
    warnings: [
      ...fellBack,
      `--allow-emulation: checking on "${name}", a CPU emulation (small shapes; correctness only, its figures are not a GPU's)`,
    ],
    proceed: true,
    retryWithSwiftshader: false,
  };
}
