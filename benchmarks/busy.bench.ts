/**
 * The training step on a machine that is not idle: the same step (lib/training-step.ts) on a
 * quiet machine and with one competing single-threaded busy process pinned to one core
 * (lib/busy-process.ts, started and stopped here), on each thread count. Quiet and busy
 * measurements alternate in rounds so both see the same stretch of the machine's other load.
 * `LOOP_BENCH_BUSY_CONFIGS=5,6` picks configurations (default 5, p-hop 1⊗4, the shape whose
 * slow-down on a busy machine the speed issue reports).
 *
 * The targets it checks: the default thread count (all cores) is never slower than 1 thread
 * under that load, and loses at most 2× against the quiet machine.
 */
import { enableNativeKernels } from "looplm";
import { type BusyProcess, startBusyProcess } from "./lib/busy-process.js";
import type { BenchContext } from "./lib/context.js";
import type { Row } from "./lib/table.js";
import { median } from "./lib/timer.js";
import { makeStep, selectedConfigs } from "./lib/training-step.js";

export const name = "busy";
export const description =
  "training step tokens/s, quiet vs with one pinned single-threaded busy process, per thread count";

export async function run(ctx: BenchContext): Promise<void> {
  const configs = selectedConfigs("LOOP_BENCH_BUSY_CONFIGS", [5]);
  const native = await enableNativeKernels();
  ctx.log(native.enabled ? "native kernels" : `portable kernels (native: ${native.reason})`);
  const rounds = ctx.quick ? 1 : 3;
  const timing = ctx.quick ? { warmup: 1, repeats: 2 } : { warmup: 1, repeats: 5 };
  // the busy process takes the last core: the engine's pool uses the first ones
  const core = ctx.cores - 1;
  const rows: Row[] = [];
  for (const c of configs) {
    const step = makeStep(c);
    const tokens = c.batch * c.seq;
    const ms = new Map<string, number[]>();
    let placement = "";
    for (let round = 0; round < rounds; round++) {
      for (const threads of ctx.threadCounts) {
        await ctx.setThreads(threads);
        for (const busy of [false, true]) {
          let proc: BusyProcess | undefined;
          if (busy) proc = await startBusyProcess(core);
          try {
            const t = await ctx.time(step, timing);
            const key = `${threads}/${busy}`;
            ms.set(key, [...(ms.get(key) ?? []), ...t.samplesMs]);
          } finally {
            if (proc) {
              placement = proc.placement;
              await proc.stop();
            }
          }
        }
      }
    }
    const quiet1 = median(ms.get(`1/false`) ?? [Number.NaN]);
    const busy1 = median(ms.get(`1/true`) ?? [Number.NaN]);
    for (const threads of ctx.threadCounts) {
      const q = median(ms.get(`${threads}/false`)!);
      const b = median(ms.get(`${threads}/true`)!);
      rows.push({
        config: c.name,
        "B×T": `${c.batch}×${c.seq}`,
        threads,
        "quiet ms/step": Math.round(q),
        "busy ms/step": Math.round(b),
        "quiet tok/s": Math.round((tokens / q) * 1000),
        "busy tok/s": Math.round((tokens / b) * 1000),
        "busy/quiet": Number((b / q).toFixed(2)),
        "busy vs 1 thread busy": Number((busy1 / b).toFixed(2)),
        "quiet vs 1 thread quiet": Number((quiet1 / q).toFixed(2)),
      });
    }
    ctx.log(`  ${c.name}: busy process ${placement}`);
  }
  ctx.table(
    rows,
    `training step, medians over ${rounds} alternating quiet/busy rounds; busy = one single-threaded ` +
      "spinning process on the last core; busy/quiet ≤ 2 and 'busy vs 1 thread busy' ≥ 1 are the targets " +
      "(> 1 = faster than 1 thread)",
  );
}
