import { restoreEnvAfterEach } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { startCudaDevice } from "./start-device.js";

// looplm's own overrides, then where a CUDA toolkit is looked for by default
restoreEnvAfterEach(["LOOPLM_CUDA_DRIVER", "LOOPLM_NVCC", "LOOPLM_NVRTC"]);
restoreEnvAfterEach(["CUDA_HOME", "CUDA_PATH", "PATH"]);

describe("startCudaDevice without what it needs", () => {
  it("names a missing driver in one line", async () => {
    process.env.LOOPLM_CUDA_DRIVER = "/nonexistent/libcuda.so.1";
    process.env.LOOPLM_NVCC = process.execPath; // any existing file: the compiler is not run
    const r = await startCudaDevice();
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.reason).toMatch(
      /^no CUDA driver: \/nonexistent\/libcuda\.so\.1 could not be opened \(.+\)$/,
    );
    expect(r.reason).not.toContain("\n");
  }, 120_000);

  it("names a missing compiler (no nvcc, no NVRTC) in one line, before touching the driver", async () => {
    process.env.LOOPLM_NVCC = "0";
    process.env.LOOPLM_NVRTC = "/nonexistent/libnvrtc.so.12";
    const r = await startCudaDevice();
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.reason).toMatch(
      /^no CUDA compiler: no nvcc \(LOOPLM_NVCC=0\) and no NVRTC \(\/nonexistent\/libnvrtc\.so\.12 could not be opened/,
    );
    expect(r.reason).not.toContain("\n");
  }, 120_000);
});
