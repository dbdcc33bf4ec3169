/**
 * The CUDA backend's ops against the CPU's (`cpuBackendOps`), op by op (cuda/op-cases.ts: every
 * op of ModelOps, forward values, the scalar objective and every input's gradient), at each GEMM
 * precision: fp32 to float32 rounding, tf32 and bf16 to their operands' rounding. Runs where an
 * NVIDIA GPU is (tools/cuda-first-run.sh); elsewhere skipped with one printed line.
 */
import { cpuBackendOps } from "@loop/looped";
import { cudaSuiteRuns } from "@loop/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { type ComputeBackend, startBackend } from "./backend.js";
import { mismatches, TOLERANCE } from "./cuda/compare.js";
import { OP_CASES, runCase } from "./cuda/op-cases.js";

async function start(precision: keyof typeof TOLERANCE) {
  try {
    return {
      ok: true as const,
      backend: await startBackend("cuda", () => {}, { cudaPrecision: precision }),
    };
  } catch (e) {
    return { ok: false as const, error: (e as Error).message };
  }
}

for (const precision of ["fp32", "tf32", "bf16"] as const) {
  const started = await start(precision);
  describe.runIf(cudaSuiteRuns(`cuda op conformance (${precision})`, started))(
    `cuda ops against the CPU's (${precision})`,
    () => {
      const backend = (started as { backend: ComputeBackend }).backend;
      afterAll(() => backend.stop());
      for (const c of OP_CASES)
        it(c.name, async () => {
          const want = await runCase(cpuBackendOps, c);
          const got = await runCase(backend.ops, c);
          expect(mismatches(got, want, TOLERANCE[precision])).toEqual([]);
        });
    },
  );
}
