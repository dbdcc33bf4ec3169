import { suiteRuns } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { KERNELS } from "../kernel-table.js";
import { buildDriverAddon, checkDriverPrototypes } from "./build-addon.js";
import { compileWithNvcc, ptxasReport } from "./compile-kernels.js";
import { cudaIncludeDir, findNvcc } from "./find-cuda.js";

const ARCHS = ["sm_80", "sm_90"];
const nvcc = findNvcc();

describe("the CUDA kernels", () => {
  it("compile with nvcc for sm_80 and sm_90, every kernel without a register spill", async () => {
    if (
      !suiteRuns(
        "the CUDA kernels' nvcc build",
        nvcc ? null : "no nvcc (CUDA_HOME, /usr/local/cuda/bin, PATH)",
        "installs the CUDA toolkit's nvcc",
      )
    )
      return;
    const r = await compileWithNvcc(nvcc!, ARCHS);
    if (!r.ok) throw new Error(r.error);
    const report = ptxasReport(r.log);
    for (const arch of ARCHS)
      expect(
        report
          .filter((e) => e.arch === arch)
          .map((e) => e.kernel)
          .sort(),
      ).toEqual(Object.keys(KERNELS).sort());
    const spills = report.filter((e) => e.spillStores > 0 || e.spillLoads > 0);
    expect(spills).toEqual([]);
  }, 600_000);

  it("ptxasReport reads spills per kernel and architecture", () => {
    const log = [
      "ptxas info    : Compiling entry function 'a' for 'sm_80'",
      "ptxas info    : Function properties for a",
      "    0 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads",
      "ptxas info    : Compiling entry function 'b' for 'sm_90'",
      "    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads",
    ].join("\n");
    expect(ptxasReport(log)).toEqual([
      { kernel: "a", arch: "sm_80", spillStores: 8, spillLoads: 4 },
      { kernel: "b", arch: "sm_90", spillStores: 0, spillLoads: 0 },
    ]);
  });
});

describe("the CUDA driver addon", () => {
  it("declares the driver's entry points as the toolkit's cuda.h does", async () => {
    const include = cudaIncludeDir();
    if (
      !suiteRuns(
        "the CUDA driver addon's prototypes",
        include ? null : "no CUDA toolkit headers (cuda.h)",
        "installs the CUDA toolkit",
      )
    )
      return;
    expect(await checkDriverPrototypes(include!)).toBeNull();
  }, 120_000);

  it("builds with the machine's C compiler and loads without a CUDA library", async () => {
    const r = await buildDriverAddon();
    if (
      !suiteRuns(
        "the CUDA driver addon build",
        r.ok ? null : r.error,
        "installs a C compiler and the Node headers",
      )
    )
      return;
    if (!r.ok) return;
    for (const f of ["start", "alloc", "launch", "readStart", "nvrtcCompile", "blasLtGemm"])
      expect(typeof (r.addon as unknown as Record<string, unknown>)[f]).toBe("function");
  }, 120_000);
});
