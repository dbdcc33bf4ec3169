/**
 * The diagnosis on hand-built probes: each way a machine can lack its GPU gives its own line, and
 * a CPU emulation is refused unless allowed. No GPU needed.
 */
import { describe, expect, it } from "vitest";
import type { AdapterInfo } from "./adapter-info.js";
import { diagnose } from "./diagnose.js";
import type { Probe } from "./probe.js";

const ICD_DIRS = ["/etc/vulkan/icd.d", "/usr/share/vulkan/icd.d"];
const SWIFTSHADER = "/usr/lib/chromium/vk_swiftshader_icd.json";

function adapter(over: Partial<AdapterInfo>): AdapterInfo {
  return {
    requestedAs: "high-performance",
    vendor: "nvidia",
    architecture: "hopper",
    device: "NVIDIA H200",
    description: "NVIDIA: 550.54.15",
    isFallbackAdapter: false,
    subgroupMinSize: 32,
    subgroupMaxSize: 32,
    features: ["shader-f16", "subgroups", "timestamp-query"],
    limits: { maxComputeWorkgroupStorageSize: 49152 },
    ...over,
  };
}

const swiftshader = adapter({
  vendor: "google",
  architecture: "swiftshader",
  device: "swiftshader-device-subzero-",
  description: "SwiftShader driver 5.0.0",
  isFallbackAdapter: true,
});

/** A Linux machine with the loader, no ICD, no GPU, no adapter: each case changes what it tests. */
function probe(over: Partial<Probe> = {}): Probe {
  return {
    platform: "linux",
    listing: { dawn: { loaded: true }, adapters: [], enumerated: [], errors: [], nativeOutput: "" },
    vulkanLoader: "/lib/x86_64-linux-gnu/libvulkan.so.1",
    loaderDirs: ["/usr/lib/x86_64-linux-gnu"],
    icdFiles: [],
    icdDirs: ICD_DIRS,
    icdOverride: null,
    strayIcdFiles: [],
    nvidia: null,
    nvidiaDriverCapabilities: null,
    swiftshaderIcd: null,
    ...over,
  };
}

const listing = (...adapters: AdapterInfo[]): Probe["listing"] => ({
  dawn: { loaded: true },
  adapters,
  enumerated: [],
  errors: [],
  nativeOutput: "",
});

const H200 = {
  version: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar 5",
  devices: ["/dev/nvidia0"],
};
const refuse = { allowEmulation: false };
const allow = { allowEmulation: true };

describe("gpu-check diagnosis", () => {
  it("no Vulkan loader: one line naming libvulkan1", () => {
    const d = diagnose(probe({ vulkanLoader: null }), refuse);
    expect(d.verdict).toBe("no-adapter");
    expect(d.proceed).toBe(false);
    expect(d.problems[0]).toMatch(
      /^Vulkan loader: libvulkan\.so\.1 not found .*apt-get install -y libvulkan1$/,
    );
  });

  it("a loader but no ICD file: names the folders searched and both variables", () => {
    const d = diagnose(probe({ swiftshaderIcd: SWIFTSHADER }), refuse);
    expect(d.problems).toEqual([
      `Vulkan driver: no ICD file in ${ICD_DIRS.join(", ")} and neither VK_ICD_FILENAMES nor VK_DRIVER_FILES is set: install the GPU's Vulkan driver (for the CPU emulation: VK_ICD_FILENAMES=${SWIFTSHADER})`,
    ]);
    expect(d.retryWithSwiftshader).toBe(false);
    // with --allow-emulation the caller may search again on SwiftShader
    expect(diagnose(probe({ swiftshaderIcd: SWIFTSHADER }), allow).retryWithSwiftshader).toBe(true);
  });

  it("an NVIDIA GPU visible but no nvidia_icd.json: says so, and points at a stray ICD file", () => {
    const d = diagnose(
      probe({
        nvidia: H200,
        icdFiles: ["/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"],
        strayIcdFiles: ["/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json"],
      }),
      refuse,
    );
    expect(d.verdict).toBe("no-adapter");
    expect(d.problems).toEqual([
      `NVIDIA GPU present (driver 550.54.15, /dev/nvidia0) but no nvidia_icd.json in ${ICD_DIRS.join(", ")}: the driver's Vulkan part is not installed or not mounted; there is /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json: VK_ICD_FILENAMES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json`,
    ]);
  });

  it("a container without the graphics capability: says which setting to use", () => {
    const d = diagnose(
      probe({ nvidia: H200, nvidiaDriverCapabilities: "compute,utility" }),
      refuse,
    );
    expect(d.problems.at(-1)).toBe(
      "container: NVIDIA_DRIVER_CAPABILITIES=compute,utility lacks graphics, so the NVIDIA container toolkit mounts no Vulkan driver: start the container with -e NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics (or all)",
    );
    // "all" and "graphics" are both enough
    for (const caps of ["all", "compute,utility,graphics"]) {
      const ok = diagnose(
        probe({
          nvidia: H200,
          nvidiaDriverCapabilities: caps,
          icdFiles: ["/etc/vulkan/icd.d/nvidia_icd.json"],
          listing: listing(adapter({})),
        }),
        refuse,
      );
      expect(ok.verdict).toBe("gpu");
      expect(ok.warnings).toEqual([]);
    }
  });

  it("a GPU machine where Dawn fell back to SwiftShader: named first, then why", () => {
    const p = probe({
      nvidia: H200,
      nvidiaDriverCapabilities: "compute,utility",
      listing: listing(swiftshader),
    });
    const d = diagnose(p, refuse);
    expect(d.verdict).toBe("refused");
    expect(d.problems[0]).toBe(
      'Dawn fell back to "google swiftshader swiftshader-device-subzero- SwiftShader driver 5.0.0", a CPU emulation, on a machine with an NVIDIA GPU (driver 550.54.15, /dev/nvidia0): the GPU\'s Vulkan driver did not load',
    );
    expect(d.problems.some((l) => l.startsWith("NVIDIA GPU present"))).toBe(true);
    expect(d.problems.some((l) => l.startsWith("container: "))).toBe(true);
    // allowed, the check goes on and still says so
    const a = diagnose(p, allow);
    expect(a.verdict).toBe("emulation");
    expect(a.warnings[0]).toMatch(/^Dawn fell back to/);
  });

  it("VK_ICD_FILENAMES pointing at SwiftShader on a GPU machine: unset it", () => {
    const d = diagnose(
      probe({
        nvidia: H200,
        icdFiles: ["/usr/share/vulkan/icd.d/nvidia_icd.json"],
        icdOverride: { name: "VK_ICD_FILENAMES", files: [SWIFTSHADER], missing: [] },
        listing: listing(swiftshader),
      }),
      refuse,
    );
    expect(d.problems).toContain(
      `VK_ICD_FILENAMES=${SWIFTSHADER} selects SwiftShader, a CPU emulation, on a machine with an NVIDIA GPU: unset it`,
    );
  });

  it("a CPU emulation is refused in one line unless --allow-emulation", () => {
    for (const a of [
      swiftshader,
      adapter({
        vendor: "mesa",
        architecture: "",
        device: "llvmpipe (LLVM 15.0.6, 256 bits)",
        description: "Mesa 22.3.6",
      }),
      adapter({
        vendor: "",
        architecture: "",
        device: "",
        description: "lavapipe",
        isFallbackAdapter: false,
      }),
      adapter({ vendor: "unknown", device: "a software adapter", isFallbackAdapter: true }),
    ]) {
      const d = diagnose(probe({ listing: listing(a) }), refuse);
      expect(d.verdict).toBe("refused");
      expect(d.proceed).toBe(false);
      expect(d.problems).toHaveLength(1);
      expect(d.problems[0]).toMatch(
        /^refused: the adapter ".*" is a CPU emulation of a GPU.*--allow-emulation/,
      );
    }
  });

  it("a CPU emulation allowed: the check goes on, with one warning", () => {
    const d = diagnose(probe({ listing: listing(swiftshader) }), allow);
    expect(d.verdict).toBe("emulation");
    expect(d.proceed).toBe(true);
    expect(d.adapter).toBe(swiftshader);
    expect(d.problems).toEqual([]);
    expect(d.warnings).toHaveLength(1);
    expect(d.warnings[0]).toMatch(/^--allow-emulation: checking on "google swiftshader/);
  });

  it("a real GPU: the high-performance adapter is the one checked", () => {
    const low = adapter({ requestedAs: "low-power", device: "Intel UHD 770", vendor: "intel" });
    const d = diagnose(
      probe({ listing: listing(low, adapter({})), icdFiles: ["/x/nvidia_icd.json"] }),
      refuse,
    );
    expect(d.verdict).toBe("gpu");
    expect(d.adapter?.device).toBe("NVIDIA H200");
    expect(d.problems).toEqual([]);
  });

  it("Dawn missing or silent: its own line", () => {
    const noDawn = diagnose(
      probe({
        listing: {
          ...listing(),
          dawn: { loaded: false, error: 'the "webgpu" package is not installed' },
        },
      }),
      refuse,
    );
    expect(noDawn.problems).toEqual(['WebGPU: the "webgpu" package is not installed']);
    const silent = diagnose(
      probe({
        icdFiles: ["/etc/vulkan/icd.d/amd.json"],
        listing: { ...listing(), nativeOutput: "Warning: loader_scan\nFound no drivers!\n" },
      }),
      refuse,
    );
    expect(silent.problems).toEqual([
      "WebGPU: Dawn found no adapter: no Vulkan driver on this machine loads (loader_scan; Found no drivers!)",
    ]);
  });

  it("a driver that fails to load: the reason in words, no path inside Dawn's sources", () => {
    // what Dawn printed on a machine whose only ICD file names a library that is not there
    const native = [
      "Warning: /nonexistent/libfoo.so: cannot open shared object file: No such file or directory",
      "Warning: loader_icd_scan: Failed loading library associated with ICD JSON /nonexistent/libfoo.so. Ignoring this JSON",
      "Warning: vkCreateInstance: Found no drivers!",
      "Warning: vkCreateInstance failed with VK_ERROR_INCOMPATIBLE_DRIVER",
      "    at CheckVkSuccessImpl (/home/runner/work/node-webgpu/node-webgpu/third_party/dawn/src/dawn/native/vulkan/VulkanError.cpp:106)",
      "",
    ].join("\n");
    const d = diagnose(
      probe({
        icdFiles: ["/etc/vulkan/icd.d/foo.json"],
        listing: { ...listing(), nativeOutput: `${native}${native}` },
      }),
      refuse,
    );
    expect(d.problems).toHaveLength(1);
    expect(d.problems[0]).toMatch(
      /^WebGPU: Dawn found no adapter: no Vulkan driver on this machine loads \(/,
    );
    expect(d.problems[0]).toContain("VK_ERROR_INCOMPATIBLE_DRIVER");
    expect(d.problems[0]).not.toMatch(/third_party|\.cpp|CheckVkSuccessImpl/);
  });
});
