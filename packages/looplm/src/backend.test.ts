/** Choosing the backend: the default falls back with a notice, a named one starts or says why. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nativeKernelNames } from "@loop/tensor/kernel";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseBackend, startBackend } from "./backend.js";

afterEach(async () => {
  vi.unstubAllEnvs();
  await startBackend("portable");
});

describe("startBackend", () => {
  it("portable when named: a value without a device, no native kernel registered", async () => {
    const b = await startBackend("portable");
    expect(b.name).toBe("portable");
    expect(b.caps.memory).toBe("host");
    expect(b.caps.precisions).toEqual(["fp32"]);
    expect(nativeKernelNames()).toEqual([]);
  });

  it("by default falls back to portable, with one notice unless LOOPLM_NATIVE=0", async () => {
    const lines: string[] = [];
    vi.stubEnv("CC", "false");
    vi.stubEnv("LOOPLM_NATIVE_CACHE", mkdtempSync(join(tmpdir(), "looplm-backend-")));
    expect((await startBackend(undefined, (l) => lines.push(l))).name).toBe("portable");
    expect(lines).toEqual([
      "portable kernels (native ones unavailable: false failed: exit code 1)",
    ]);
    vi.stubEnv("LOOPLM_NATIVE", "0");
    expect((await startBackend(undefined, (l) => lines.push(l))).name).toBe("portable");
    expect(lines).toHaveLength(1);
  });

  it("cuda without a driver (or without a compiler) is one line naming what is missing", async () => {
    vi.stubEnv("LOOPLM_CUDA_CACHE", mkdtempSync(join(tmpdir(), "looplm-cuda-")));
    vi.stubEnv("LOOPLM_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
    vi.stubEnv("LOOPLM_NVCC", process.execPath); // a file that exists: the kernels are never built
    await expect(startBackend("cuda")).rejects.toThrow(
      /^--backend cuda cannot start here: no CUDA driver: \/nonexistent\/libcuda\.so\.1 could not be opened \([^\n]+\)$/,
    );
    vi.stubEnv("LOOPLM_NVCC", "0");
    vi.stubEnv("LOOPLM_NVRTC", "0");
    await expect(startBackend("cuda")).rejects.toThrow(
      /^--backend cuda cannot start here: no CUDA compiler: no nvcc \(LOOPLM_NVCC=0\) and no NVRTC \(switched off\)$/,
    );
    expect(nativeKernelNames()).toEqual([]);
  }, 120_000);

  it("a named backend that cannot start is an error naming why, and leaves portable", async () => {
    vi.stubEnv("LOOPLM_NATIVE", "0");
    await expect(startBackend("native")).rejects.toThrow(
      /^--backend native cannot start here: native kernels disabled by LOOPLM_NATIVE$/,
    );
    expect(nativeKernelNames()).toEqual([]);
  });

  it("parses backend names, refusing others with the choices", () => {
    expect(parseBackend("native")).toBe("native");
    expect(parseBackend("cuda")).toBe("cuda");
    expect(() => parseBackend("rocm")).toThrow(
      '--backend must be one of portable, native, webgpu, cuda, got "rocm"',
    );
  });
});
