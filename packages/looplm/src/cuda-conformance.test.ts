/**
 * `looplm check`'s op cases (check/op-cases.ts, compared by check/op-conformance.ts: every
 * output and every input gradient against the CPU oracle) on the CUDA backend, at each GEMM
 * precision: every case in fp32, the GEMM-bearing ones in tf32 and bf16 within check's
 * REDUCED_PRECISION_TOL. Runs where an NVIDIA GPU is (on a bare GPU node `looplm check
 * --backend cuda` runs the same cases); elsewhere skipped with one printed line.
 */
import { CUDA_PRECISIONS } from "@loop/cuda";
import { cudaSuiteRuns } from "@loop/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { type ComputeBackend, startBackend } from "./backend.js";
import { type AnyOps, opCases, REDUCED_PRECISION_TOL } from "./check/op-cases.js";
import { checkOpCase, oracleOps } from "./check/op-conformance.js";

async function start() {
  try {
    return { ok: true as const, backend: await startBackend("cuda", () => {}) };
  } catch (e) {
    return { ok: false as const, error: (e as Error).message };
  }
}

const cases = opCases();
const oracle = oracleOps();
const started = await start();
afterAll(() => {
  if (started.ok) started.backend.stop();
});

for (const precision of CUDA_PRECISIONS) {
  describe.runIf(cudaSuiteRuns(`looplm check's op cases on cuda (${precision})`, started))(
    `looplm check's op cases on cuda against the CPU oracle (${precision})`,
    () => {
      // (read in the tests: a skipped suite's body still runs, with no backend)
      const opsAt = () => {
        const backend = (started as { backend: ComputeBackend }).backend;
        return backend.opsAt(precision) as AnyOps;
      };
      const list = precision === "fp32" ? cases : cases.filter((c) => c.precision === "any");
      const tol = precision === "fp32" ? undefined : REDUCED_PRECISION_TOL[precision];
      it.each(list.map((c) => [c.name, cases.indexOf(c)] as const))("%s", async (_name, i) => {
        const r = await checkOpCase(opsAt(), oracle, cases[i]!, 100 + i, tol);
        expect(r.error).toBeUndefined();
        expect(r.worst!.ratio, JSON.stringify(r.worst)).toBeLessThanOrEqual(1);
      });
    },
  );
}
