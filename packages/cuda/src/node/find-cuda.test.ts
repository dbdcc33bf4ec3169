import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { restoreEnvAfterEach } from "@loop/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { cublasLtCandidates, DRIVER_DIRS, driverCandidates, nvrtcCandidates } from "./find-cuda.js";

const work = mkdtempSync(join(tmpdir(), "looplm-find-cuda-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
restoreEnvAfterEach([
  "VIRTUAL_ENV",
  "HOME",
  "LOOPLM_CUDA_DRIVER",
  "LOOPLM_CUBLASLT",
  "LOOPLM_ASK_PYTHON",
]);

/** Empty files at `paths` under `root`. */
function files(root: string, paths: string[]): void {
  for (const p of paths) {
    mkdirSync(join(root, p, ".."), { recursive: true });
    writeFileSync(join(root, p), "");
  }
}

describe("where the CUDA libraries are looked for", () => {
  it("in a Python environment's CUDA 13 wheels (nvidia/cu13/lib) first, then the other wheels and torch/lib", () => {
    const venv = join(work, "venv");
    const site = "lib/python3.12/site-packages";
    files(venv, [
      `${site}/nvidia/cublas/lib/libcublasLt.so.12`,
      `${site}/nvidia/cu13/lib/libcublasLt.so.13`,
      `${site}/nvidia/cu13/lib/libnvrtc.so.13`,
      `${site}/torch/lib/libcublasLt.so.13`,
    ]);
    process.env.VIRTUAL_ENV = venv;
    process.env.LOOPLM_ASK_PYTHON = "0";
    const lt = cublasLtCandidates().filter((p) => p.startsWith(venv));
    expect(lt).toEqual([
      join(venv, site, "nvidia/cu13/lib/libcublasLt.so.13"),
      join(venv, site, "nvidia/cublas/lib/libcublasLt.so.12"),
      join(venv, site, "torch/lib/libcublasLt.so.13"),
    ]);
    expect(nvrtcCandidates()).toContain(join(venv, site, "nvidia/cu13/lib/libnvrtc.so.13"));
    // the loader's names come last
    expect(cublasLtCandidates().slice(-3)).toEqual([
      "libcublasLt.so.13",
      "libcublasLt.so.12",
      "libcublasLt.so",
    ]);
  });

  it("in environments without VIRTUAL_ENV: a pyenv install under HOME", () => {
    const home = join(work, "home");
    const site = ".pyenv/versions/3.11.9/lib/python3.11/site-packages";
    files(home, [`${site}/nvidia/cublas/lib/libcublasLt.so.12`]);
    process.env.HOME = home;
    process.env.LOOPLM_ASK_PYTHON = "0";
    expect(cublasLtCandidates()).toContain(join(home, site, "nvidia/cublas/lib/libcublasLt.so.12"));
  });

  it("a setting names the one library to use, or none", () => {
    process.env.LOOPLM_CUBLASLT = "/x/libcublasLt.so.13";
    expect(cublasLtCandidates()).toEqual(["/x/libcublasLt.so.13"]);
    process.env.LOOPLM_CUBLASLT = "0";
    expect(cublasLtCandidates()).toEqual([]);
  });

  it("the driver: through the loader first, then each folder that holds it; a setting alone", () => {
    const c = driverCandidates();
    expect(c[0]).toBe("libcuda.so.1");
    for (const p of c.slice(1))
      expect(DRIVER_DIRS.map((d) => join(d, "libcuda.so.1"))).toContain(p);
    expect(DRIVER_DIRS).toContain("/usr/local/nvidia/lib64");
    process.env.LOOPLM_CUDA_DRIVER = "/opt/driver/libcuda.so.1";
    expect(driverCandidates()).toEqual(["/opt/driver/libcuda.so.1"]);
  });
});
