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
import { type CaseResult, OP_CASES, runCase } from "./cuda/op-cases.js";

const TOLERANCE = { fp32: 2e-4, tf32: 5e-3, bf16: 4e-2 } as const;

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

/** max |a − b| / max(max |b|, 1e-3): one figure per tensor. */
function relErr(a: Float32Array, b: Float32Array): number {
  let d = 0;
  let m = 1e-3;
  for (let k = 0; k < b.length; k++) {
    d = Math.max(d, Math.abs(a[k]! - b[k]!));
    m = Math.max(m, Math.abs(b[k]!));
  }
  return a.length === b.length ? d / m : Number.POSITIVE_INFINITY;
}

/** The mismatches of `got` against the CPU's `want`, one line each. */
export function mismatches(got: CaseResult, want: CaseResult, tol: number): string[] {
  const out: string[] = [];
  const e = relErr(got.out, want.out);
  if (!(e <= tol)) out.push(`output: relative error ${e.toExponential(2)}`);
  const l = Math.abs(got.loss - want.loss) / Math.max(1e-3, Math.abs(want.loss));
  if (!(l <= tol)) out.push(`objective: ${got.loss} vs ${want.loss}`);
  want.grads.forEach((g, k) => {
    const h = got.grads[k];
    if ((g === null) !== (h == null))
      out.push(`input ${k}: gradient ${g ? "missing" : "unexpected"}`);
    else if (g && h) {
      const r = relErr(h, g);
      if (!(r <= tol)) out.push(`input ${k} gradient: relative error ${r.toExponential(2)}`);
    }
  });
  return out;
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
