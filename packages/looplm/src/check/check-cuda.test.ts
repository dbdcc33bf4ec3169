/**
 * `looplm check --backend cuda`: without a CUDA driver (this machine, CI) it refuses in one line
 * naming what is missing, before any case runs; on a machine with an NVIDIA GPU it runs every
 * correctness case, the GEMM-bearing op cases in tf32 and bf16 too, and passes.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCudaDevice } from "@loop/cuda/node";
import { cudaSuiteRuns } from "@loop/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { run } from "../cli/run-in-process.test-util.js";
import { opCases } from "./op-cases.js";
import type { CheckReport } from "./report.js";

const root = mkdtempSync(join(tmpdir(), "looplm-check-cuda-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const device = await startCudaDevice();
if (device.ok) device.device.destroy();

describe.runIf(!device.ok)("looplm check --backend cuda without a CUDA driver", () => {
  it("refuses in one line naming the missing driver, GPU or compiler, and the alternative", async () => {
    const reason = device.ok ? "" : device.reason;
    const err = await run("check", "--backend", "cuda", "--out", join(root, "no-gpu")).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toBe(
      `--backend cuda cannot start here: ${reason}; \`looplm check --backend native\` checks this machine's CPU kernels instead`,
    );
    expect(err?.message).not.toContain("\n");
    expect(reason).toMatch(/^no CUDA (driver|GPU|compiler)/);
  });
});

const gpu = device.ok ? { ok: true as const } : { ok: false as const, error: device.reason };
describe.runIf(cudaSuiteRuns("looplm check --backend cuda on a GPU", gpu))(
  "looplm check --backend cuda",
  () => {
    it("on an NVIDIA GPU: every case passes, the GEMM cases in tf32 and bf16 too", async () => {
      const out = join(root, "gpu");
      await run("check", "--backend", "cuda", "--size", "small", "--budget", "2m", "--out", out);
      const r = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as CheckReport;
      expect(r.precisions).toEqual(["fp32", "tf32", "bf16"]);
      expect(r.failed).toBe(0);
      const gemm = opCases().filter((c) => c.precision === "any");
      for (const p of ["tf32", "bf16"])
        expect(r.cases.filter((c) => c.name.endsWith(`(${p})`)).length).toBe(gemm.length);
    }, 600_000);
  },
);
