/**
 * Where a training step's time goes, kernel by kernel: the step of lib/training-step.ts on the
 * native kernels, timed by @loop/tensor/node's kernel profile (every native call, GEMMs by
 * layout and shape), as ms per step and share of the step; the row "outside native kernels" is
 * the rest (JavaScript: the tape, allocation, N-API calls), and one row sums every GEMM shape.
 * Configurations 3 and 6 unless `LOOP_BENCH_PROFILE_CONFIGS` names others;
 * `LOOP_BENCH_PROFILE_TOP` rows each (default 15; the others summed in one row).
 */
import { startKernelProfile, stopKernelProfile } from "@loop/tensor/node";
import { enableNativeKernels } from "looplm";
import type { BenchContext } from "./lib/context.js";
import type { Row } from "./lib/table.js";
import { makeStep, selectedConfigs } from "./lib/training-step.js";

export const name = "profile";
export const description = "a training step's time per native kernel (GEMMs by shape)";

export async function run(ctx: BenchContext): Promise<void> {
  const native = await enableNativeKernels();
  if (!native.enabled) throw new Error(`the profile times native kernels: ${native.reason}`);
  const configs = selectedConfigs("LOOP_BENCH_PROFILE_CONFIGS", [3, 6]);
  const top = Number(process.env.LOOP_BENCH_PROFILE_TOP ?? 15);
  if (!Number.isInteger(top) || top < 1)
    throw new Error(`LOOP_BENCH_PROFILE_TOP: expected a positive integer, got ${top}`);
  const steps = ctx.quick ? 1 : 6;
  for (const threads of ctx.threadCounts) {
    await ctx.setThreads(threads);
    for (const c of configs) {
      const step = makeStep(c);
      step();
      step(); // (warm: buffers pooled, addons built, code optimised)
      startKernelProfile();
      const t0 = performance.now();
      for (let i = 0; i < steps; i++) step();
      const stepMs = (performance.now() - t0) / steps;
      const entries = stopKernelProfile();
      const row = (kernel: string, calls: number, ms: number): Row => ({
        kernel,
        "calls/step": Number((calls / steps).toFixed(1)),
        "ms/step": Number((ms / steps).toFixed(2)),
        "% of step": Number(((100 * ms) / steps / stepMs).toFixed(1)),
      });
      const rows = entries.slice(0, top).map((e) => row(e.kernel, e.calls, e.ms));
      const rest = entries.slice(top);
      if (rest.length > 0)
        rows.push(
          row(
            `(${rest.length} other kernels)`,
            rest.reduce((s, e) => s + e.calls, 0),
            rest.reduce((s, e) => s + e.ms, 0),
          ),
        );
      const gemms = entries.filter((e) => e.kernel.startsWith("tensor/sgemm"));
      rows.push(
        row(
          "(all tensor/sgemm shapes)",
          gemms.reduce((s, e) => s + e.calls, 0),
          gemms.reduce((s, e) => s + e.ms, 0),
        ),
      );
      const inKernels = entries.reduce((s, e) => s + e.ms, 0);
      rows.push(row("outside native kernels", 0, Math.max(0, stepMs * steps - inKernels)));
      ctx.table(
        rows,
        `${c.name}, B×T ${c.batch}×${c.seq}, ${threads} thread(s): ${stepMs.toFixed(0)} ms/step ` +
          `(mean of ${steps}); sgemm rows are op(A)·op(B) M×N×K`,
      );
    }
  }
}
