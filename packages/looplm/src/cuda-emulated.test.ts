/**
 * The CUDA backend's kernels run on the host (the CPU emulator of @loop/cuda/node: the same
 * CUDA C, each block's threads as fibers) through `looplm check`'s op cases (check/op-cases.ts,
 * compared by check/op-conformance.ts: every output and every input gradient against the CPU
 * oracle) in fp32, and the GEMM-bearing cases in tf32 and bf16 too (the tensor-core kernels,
 * within check's REDUCED_PRECISION_TOL): the kernels' arithmetic, indexing and tile layouts
 * checked on machines without a GPU, on the very cases `looplm check --backend cuda` runs on one.
 * Skipped with one printed line without a C++ compiler (a failure under CI).
 */
import { CUDA_PRECISIONS, cudaBackend } from "@loop/cuda";
import { startEmulatedDevice } from "@loop/cuda/node";
import { emulatorSuiteRuns } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { type AnyOps, opCases, REDUCED_PRECISION_TOL } from "./check/op-cases.js";
import { checkOpCase, oracleOps } from "./check/op-conformance.js";

const started = await startEmulatedDevice();
const runs = emulatorSuiteRuns("the CUDA kernels on the host emulator", started);
const cases = opCases();
const oracle = oracleOps();

for (const precision of CUDA_PRECISIONS)
  describe.runIf(runs)(
    `looplm check's op cases on the emulated cuda kernels (${precision})`,
    () => {
      const list = precision === "fp32" ? cases : cases.filter((c) => c.precision === "any");
      const ops = started.ok ? (cudaBackend(started.device, { precision }).ops as AnyOps) : null;
      const tol = precision === "fp32" ? undefined : REDUCED_PRECISION_TOL[precision];
      it.each(list.map((c) => [c.name, cases.indexOf(c)] as const))("%s", async (_name, i) => {
        const r = await checkOpCase(ops!, oracle, cases[i]!, 100 + i, tol);
        expect(r.error).toBeUndefined();
        expect(r.worst!.ratio, JSON.stringify(r.worst)).toBeLessThanOrEqual(1);
        // tensor-core operands really: not the fp32 result
        if (precision !== "fp32") expect(r.worst!.ratio).toBeGreaterThan(0);
      });
    },
  );
