/**
 * The CUDA backend's kernels run on the host (the CPU emulator of @loop/cuda/node: the same
 * CUDA C, each block's threads as OS threads) against the CPU's ops, op by op (cuda/op-cases.ts:
 * every op of ModelOps, the output, the objective and every input's gradient) in fp32, and the
 * ops that run GEMMs in tf32 and bf16 too (the tensor-core kernels) — the kernels' arithmetic, indexing and tile layouts checked on machines without a
 * GPU. Skipped with one printed line without a C++ compiler (a failure under CI).
 */
import { cudaBackend, type Precision } from "@loop/cuda";
import { startEmulatedDevice } from "@loop/cuda/node";
import { cpuBackendOps } from "@loop/looped";
import { suiteRuns } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { mismatches, TOLERANCE } from "./cuda/compare.js";
import { OP_CASES, runCase } from "./cuda/op-cases.js";

const started = await startEmulatedDevice();
const runs = suiteRuns(
  "the CUDA kernels on the host emulator",
  started.ok ? null : started.reason,
  "installs g++",
);

for (const precision of ["fp32", "tf32", "bf16"] as Precision[])
  describe.runIf(runs)(
    `cuda kernels (emulated on the host) against the CPU's ops (${precision})`,
    () => {
      for (const c of OP_CASES.filter((c) => precision === "fp32" || c.gemm))
        it(c.name, async () => {
          if (!started.ok) return;
          const { ops } = cudaBackend(started.device, { precision });
          const want = await runCase(cpuBackendOps, c);
          const got = await runCase(ops, c);
          expect(mismatches(got, want, TOLERANCE[precision])).toEqual([]);
        });
    },
  );
