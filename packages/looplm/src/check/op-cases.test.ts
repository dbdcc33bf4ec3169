/**
 * The conformance cases of `looplm check` (op-cases.ts), each one a test here too: every op of
 * the backend contract, forward and backward, on the portable, native and webgpu backends against
 * the CPU oracle (the portable backend's SIMD GEMM against the oracle's reference one), fp32 and (webgpu) mixed precision. The same table is what `looplm check` runs, so
 * a case added there is a test here. Skipped with one printed line where a backend cannot start
 * (a failure under CI).
 */
import { gpuSuiteRuns, nativeSuiteRuns } from "@loop/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { type ComputeBackend, startBackend } from "../backend.js";
import { type AnyOps, MIXED_TOL, opCases } from "./op-cases.js";
import { checkOpCase, oracleOps } from "./op-conformance.js";

async function tryStart(b: "portable" | "native" | "webgpu") {
  try {
    return { ok: true as const, backend: await startBackend(b) };
  } catch (e) {
    return { ok: false as const, error: (e as Error).message };
  }
}

const cases = opCases();
const oracle = oracleOps();

type Started = Awaited<ReturnType<typeof tryStart>>;

/**
 * The suite of one backend, run where it started: every case a test of its own (`b`'s ops within
 * the case's tolerance of the oracle's), then `more` tests of it.
 */
function opCaseSuite(
  name: string,
  started: Started,
  runs: boolean,
  more: (b: ComputeBackend) => void = () => {},
) {
  describe.runIf(runs)(`op cases on ${name} against the CPU oracle`, () => {
    const b = started.ok ? started.backend : (null as unknown as ComputeBackend);
    afterAll(() => b?.stop());
    it.each(cases.map((c, i) => [c.name, i] as const))("%s", async (_name, i) => {
      const r = await checkOpCase(b.ops as AnyOps, oracle, cases[i]!, 100 + i);
      expect(r.error).toBeUndefined();
      expect(r.worst!.ratio, JSON.stringify(r.worst)).toBeLessThanOrEqual(1);
    });
    more(b);
  });
}

const portable = await tryStart("portable");
opCaseSuite("portable", portable, true, () => {
  it("starts", () => expect(portable.ok, portable.ok ? "" : portable.error).toBe(true));
});

const native = await tryStart("native");
opCaseSuite("native", native, nativeSuiteRuns("looplm check's op cases on native", native));

const webgpu = await tryStart("webgpu");
opCaseSuite("webgpu", webgpu, gpuSuiteRuns("looplm check's op cases on webgpu", webgpu), (b) => {
  it("mixed precision: the GEMM cases within the f16 tolerance", async () => {
    const ops = b.opsAt("mixed") as AnyOps;
    try {
      const mixed = cases.filter((c) => c.precision === "any");
      expect(mixed.length).toBeGreaterThan(3);
      for (const [i, c] of mixed.entries()) {
        const r = await checkOpCase(ops, oracle, c, 200 + i, MIXED_TOL);
        expect(r.error, c.name).toBeUndefined();
        expect(r.worst!.ratio, `${c.name}: ${JSON.stringify(r.worst)}`).toBeLessThanOrEqual(1);
        // f16 operands really: not the fp32 result
        expect(r.worst!.ratio, `${c.name} rounds to f16`).toBeGreaterThan(0);
      }
    } finally {
      b.opsAt("fp32");
    }
  });
});
