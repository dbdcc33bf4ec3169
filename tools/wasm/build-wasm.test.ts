import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { findWatFiles } from "./build-wasm.js";
import { compileWat, exportName, wasmModuleSource } from "./compile-wat.js";

describe("committed WebAssembly modules", () => {
  it("finds the GEMM kernel source", async () => {
    const files = await findWatFiles();
    expect(files.some((f) => f.endsWith("packages/tensor/src/kernels/gemm.wat"))).toBe(true);
  });

  it("recompiling every .wat reproduces its committed .wasm.ts byte for byte", async () => {
    for (const wat of await findWatFiles()) {
      const bytes = await compileWat(wat);
      expect(WebAssembly.validate(bytes)).toBe(true);
      const committed = await readFile(wat.replace(/\.wat$/, ".wasm.ts"), "utf8");
      expect(committed).toBe(wasmModuleSource(wat, bytes));
    }
  });

  it("names the export after the file", () => {
    expect(exportName("/x/gemm.wat")).toBe("gemmWasmBase64");
    expect(exportName("/x/ssd-scan.wat")).toBe("ssdScanWasmBase64");
  });
});
