/**
 * A backend's capabilities are data its own package derives, and looplm reads them: a CPU
 * backend is host memory at fp32 decoding with every step policy; the cuda backend (over a
 * recording device, standing in for a started GPU) is device memory at fp32, tf32 and bf16,
 * recurrent decoding with every step policy (its decode kernels), on its own GEMM kernels (no
 * cuBLASLt on a recording device); the webgpu backend (where an adapter exists: SwiftShader in
 * CI) is device memory at fp32 and mixed, recurrent decoding, the features its device was
 * created with, and carries its measurement probes. `opsAt` refuses a precision the backend
 * lacks by name, and `looplm generate --exit` on a backend without decode kernels is refused
 * naming it. Outside backend.ts, no looplm source asks which backend it runs on.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { recordingDevice } from "@loop/cuda";
import { parseExitRule } from "@loop/exit-gate";
import { BACKEND_FEATURES, decodeCapability, STEP_POLICY_KINDS } from "@loop/tensor";
import { goldenPath, gpuSuiteRuns } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import {
  BACKENDS,
  backendHelp,
  backendMemory,
  type ComputeBackend,
  cudaComputeBackend,
  startBackend,
} from "./backend.js";
import { runGenerate } from "./cli/commands/generate.js";

const webgpu = await startBackend("webgpu").then(
  (backend) => ({ ok: true as const, backend }),
  (e: Error) => ({ ok: false as const, error: e.message }),
);

describe.runIf(gpuSuiteRuns("webgpu capabilities", webgpu))("webgpu capabilities", () => {
  it("device memory, fp32 and mixed, its device's features, its probes", () => {
    const b = (webgpu as { backend: ComputeBackend }).backend;
    try {
      expect(b.caps).toMatchObject({
        memory: "device",
        precisions: ["fp32", "mixed"],
        decode: { recurrent: true, policies: [...STEP_POLICY_KINDS] },
        train: { customMixers: false },
        fused: ["linears", "linearSplit"],
      });
      for (const f of b.caps.features) expect(BACKEND_FEATURES).toContain(f);
      expect(b.caps.features).not.toContain("tensor-cores");
      expect(b.probes).toBeDefined();
      expect(backendMemory("webgpu")).toBe(b.caps.memory);
      expect(b.adapter?.name.length).toBeGreaterThan(0);
      expect(b.opsAt("mixed")).toBe(b.ops);
      expect(b.opsAt("fp32")).toBe(b.ops);
      expect(() => b.opsAt("bf16")).toThrow(
        /^--precision bf16 is not offered by --backend webgpu \(it offers fp32, mixed\)$/,
      );
    } finally {
      b.stop();
    }
  });
});

describe("backend capabilities", () => {
  it("a CPU backend: host memory, fp32, recurrent decoding with every step policy", async () => {
    const b = await startBackend("portable");
    expect(b.caps).toMatchObject({
      memory: "host",
      precisions: ["fp32"],
      decode: { recurrent: true, policies: [...STEP_POLICY_KINDS] },
      train: { customMixers: true },
      features: [],
    });
    expect(b.caps.gemm).toBe(b.kernels.gemm.name);
    expect(backendMemory("portable")).toBe(b.caps.memory);
    expect(b.opsAt("fp32")).toBe(b.ops);
    expect(() => b.opsAt("mixed")).toThrow(
      /^--precision mixed is not offered by --backend portable \(it offers fp32\)$/,
    );
  });

  it("cuda: device memory, its precisions, recurrent decoding, its GEMM engine", () => {
    const b = cudaComputeBackend(recordingDevice());
    expect(b.caps).toMatchObject({
      memory: "device",
      precisions: ["fp32", "tf32", "bf16"],
      decode: { recurrent: true, policies: [...STEP_POLICY_KINDS] },
      train: { customMixers: false },
      features: ["tensor-cores"],
      gemm: "own kernels",
    });
    expect(backendMemory("cuda")).toBe(b.caps.memory);
    expect(b.opsAt("fp32")).toBe(b.ops);
    const bf16 = b.opsAt("bf16");
    expect(bf16).not.toBe(b.ops);
    expect(b.opsAt("bf16")).toBe(bf16);
    expect(() => b.opsAt("mixed")).toThrow(
      /^--precision mixed is not offered by --backend cuda \(it offers fp32, tf32, bf16\)$/,
    );
    b.stop();
  });

  it("generate --exit on a device backend without decode kernels is refused naming it", async () => {
    const cuda = cudaComputeBackend(recordingDevice());
    // (its ops without the decode kernels: full depth by recomputing, as such a backend offers)
    const b = { ...cuda, caps: { ...cuda.caps, decode: decodeCapability({}) } };
    await expect(
      runGenerate(
        {
          model: goldenPath("mamba-2x2-gate"),
          tokens: "1,2,3",
          maxNew: 2,
          temperature: 0,
          topK: 0,
          seed: 0,
          exit: [parseExitRule("entropy:0.3")],
        },
        b,
      ),
    ).rejects.toThrow(
      /^--exit entropy:0\.3: generate on --backend cuda runs every token through all loop steps; use --backend portable or native$/,
    );
  });

  it("every backend has its --help line", () => {
    for (const b of BACKENDS) expect(backendHelp(b).length).toBeGreaterThan(10);
  });

  it("no looplm source outside backend.ts asks which backend it runs on", () => {
    const src = join(import.meta.dirname);
    const files = (readdirSync(src, { recursive: true }) as string[]).filter(
      (f) => f.endsWith(".ts") && !f.includes(".test") && f !== "backend.ts",
    );
    const asks =
      /\.name\s*[!=]==\s*"(portable|native|webgpu|cuda)"|\.backend\s*[!=]==\s*"|\.(gpu|onDevice|opsAt)\s*[!?)&|]|name\.startsWith/;
    const found = files.flatMap((f) =>
      readFileSync(join(src, f), "utf8")
        .split("\n")
        .map((line, i) => [f, i + 1, line] as const)
        .filter(([, , line]) => asks.test(line)),
    );
    expect(found.map(([f, n, l]) => `${f}:${n}: ${l.trim()}`)).toEqual([]);
  });
});
