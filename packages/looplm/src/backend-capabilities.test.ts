/**
 * A backend's capabilities are data its own package derives, and looplm reads them: a CPU
 * backend is host memory at fp32 decoding with every step policy; the cuda backend (over a
 * recording device, standing in for a started GPU) is device memory at fp32, tf32 and bf16,
 * recurrent decoding with every step policy (its decode kernels), on its own GEMM kernels (no
 * cuBLASLt on a recording device). Its `opsAt` refuses a precision it lacks by name, and
 * `looplm generate --exit` on a backend without decode kernels is refused naming it. Outside backend.ts, no looplm source asks which backend it runs on.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { recordingDevice } from "@loop/cuda";
import { parseExitRule } from "@loop/exit-gate";
import { decodeCapability, STEP_POLICY_KINDS } from "@loop/tensor";
import { goldenPath } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { BACKENDS, backendHelp, cudaComputeBackend, startBackend } from "./backend.js";
import { runGenerate } from "./cli/commands/generate.js";

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
