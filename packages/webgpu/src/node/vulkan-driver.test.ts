/**
 * The Vulkan driver search on fake file systems (a temporary folder as the root): an NVIDIA ICD
 * file in the container mount, NVIDIA's library without an ICD file (one is written), only an
 * emulation (refused unless allowed, and named), a caller's choice kept, and the loader: the
 * system's, the bundle's when the system has none, or none.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findVulkanDriver, SWIFTSHADER_ICD } from "./vulkan-driver.js";

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

/** A fake root holding `files` (path → content). */
function fakeRoot(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "looplm-vk-"));
  roots.push(root);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(root + path), { recursive: true });
    writeFileSync(root + path, content);
  }
  return root;
}

const icd = (library: string) =>
  JSON.stringify({ file_format_version: "1.0.0", ICD: { library_path: library } });
// an environment that points nowhere real (HOME inside the fake root)
const env = (root: string, more: Record<string, string> = {}) => ({
  HOME: `${root}/home`,
  ...more,
});
const LOADER = "/usr/lib/x86_64-linux-gnu/libvulkan.so.1";

describe("findVulkanDriver", () => {
  it("finds NVIDIA's ICD file in the container's driver mount and names it", () => {
    const root = fakeRoot({
      "/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json": icd("libGLX_nvidia.so.0"),
      [SWIFTSHADER_ICD]: icd("./libvk_swiftshader.so"),
      [LOADER]: "",
    });
    const d = findVulkanDriver({ root, env: env(root) });
    expect(d.gpu).toBe(true);
    expect(d.emulated).toBe(false);
    // the GPU driver only: the loader must not pick the emulation beside it
    expect(d.driverFiles).toBe(`${root}/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json`);
    expect(d.loader).toBe(root + LOADER);
    expect(d.line).toMatch(/^Vulkan driver: .*nvidia_icd\.json \(libGLX_nvidia\.so\.0\); loader /);
    expect(d.icdFiles.map((f) => f.emulated)).toEqual([false, true]);
  });

  it("finds an ICD file in a versioned /usr/lib/x86_64-linux-gnu/nvidia* folder", () => {
    const root = fakeRoot({
      "/usr/lib/x86_64-linux-gnu/nvidia/current/nvidia_icd.json": icd("libGLX_nvidia.so.0"),
    });
    const d = findVulkanDriver({ root, env: env(root) });
    expect(d.driverFiles).toBe(`${root}/usr/lib/x86_64-linux-gnu/nvidia/current/nvidia_icd.json`);
  });

  it("writes an ICD file where libGLX_nvidia.so.0 exists without one", () => {
    const root = fakeRoot({ "/usr/local/nvidia/lib64/libGLX_nvidia.so.0": "", [LOADER]: "" });
    const out = join(root, "written");
    mkdirSync(out);
    const d = findVulkanDriver({ root, env: env(root), writeDir: () => out });
    expect(d.gpu).toBe(true);
    expect(d.written).toBe(join(out, "nvidia_icd.json"));
    expect(d.driverFiles).toBe(d.written);
    const json = JSON.parse(readFileSync(d.written!, "utf8"));
    expect(json.ICD.library_path).toBe(`${root}/usr/local/nvidia/lib64/libGLX_nvidia.so.0`);
    expect(d.line).toContain("through an ICD file written to");
  });

  it("refuses an emulation unless allowed, and names it as one when allowed", () => {
    const root = fakeRoot({ [SWIFTSHADER_ICD]: icd("./libvk_swiftshader.so"), [LOADER]: "" });
    const refused = findVulkanDriver({ root, env: env(root) });
    expect(refused.gpu).toBe(false);
    expect(refused.driverFiles).toBeNull();
    expect(refused.line).toMatch(/no GPU driver found.*--allow-emulation/);
    const allowed = findVulkanDriver({ root, env: env(root), allowEmulation: true });
    expect(allowed.emulated).toBe(true);
    expect(allowed.driverFiles).toBe(root + SWIFTSHADER_ICD);
    expect(allowed.line).toContain("emulated: not a GPU");
  });

  it("keeps the caller's VK_ICD_FILENAMES and says whether it is an emulation", () => {
    const root = fakeRoot({ [LOADER]: "" });
    const d = findVulkanDriver({ root, env: env(root, { VK_ICD_FILENAMES: SWIFTSHADER_ICD }) });
    expect(d.driverFiles).toBeNull();
    expect(d.emulated).toBe(true);
    expect(d.line).toContain(`VK_ICD_FILENAMES=${SWIFTSHADER_ICD} as set (a CPU emulation)`);
  });

  it("uses the bundle's loader where its launcher put it on the path, and says when there is none", () => {
    const root = fakeRoot({ "/bundle/lib/vulkan/libvulkan.so.1": "" });
    const bundled = `${root}/bundle/lib/vulkan/libvulkan.so.1`;
    const withBundle = findVulkanDriver({
      root,
      env: env(root, { LOOPLM_BUNDLED_VULKAN_LOADER: bundled, LD_LIBRARY_PATH: dirname(bundled) }),
    });
    expect(withBundle.loader).toBe(`bundled: ${bundled}`);
    expect(withBundle.line).toContain(`loader bundled: ${bundled}`);
    const none = findVulkanDriver({ root, env: env(root) });
    expect(none.loader).toBeNull();
    expect(none.line).toContain("no Vulkan loader (libvulkan.so.1)");
  });
});
