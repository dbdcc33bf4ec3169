/**
 * The training step on a machine that is not idle: the same step (lib/training-step.ts) on a
 * quiet machine and with one competing single-threaded busy process pinned to one core
 * (lib/busy-process.ts, started and stopped here), on each thread count. Quiet and busy
 * measurements alternate in rounds so both see the same stretch of the machine's other load.
 * `LOOP_BENCH_BUSY_CONFIGS=5,6` picks configurations (default 5, p-hop 1⊗4, the shape whose
 * slow-down on a busy machine the speed issue reports).
 *
 * The targets it checks: the default thread count is never slower than 1 thread under that load,
 * and loses at most 2× against the quiet machine. The default is all cores with the thread
 * governor (`looplm train` and the other training commands install it): the row "auto" runs
 * the step in a loop as the trainer does, governed, and reports the mean over its steps after
 * the first `SETTLE` (probes included), with the thread counts it used.
 */
import { installThreadGovernor, ThreadGovernor } from "@loop/tensor";
import { enableNativeKernels } from "looplm";
import { type BusyProcess, startBusyProcess } from "./lib/busy-process.js";
import type { BenchContext } from "./lib/context.js";
import type { Row } from "./lib/table.js";
import { median } from "./lib/timer.js";
import { makeStep, selectedConfigs } from "./lib/training-step.js";

export const name = "busy";
export const description =
  "training step tokens/s, quiet vs with one pinned single-threaded busy process, per thread count";

/** Governed steps not timed (warm-up and the first probes), then steps timed. */
const SETTLE = 40;
const GOVERNED = 120;

/** The mean ms of `GOVERNED` steps under a fresh governor (after `SETTLE`), and the thread counts used. */
async function governed(
  step: () => unknown,
  max: number,
  settle: number,
  steps: number,
): Promise<{ ms: number[]; used: Map<number, number> }> {
  const g = new ThreadGovernor({ max });
  installThreadGovernor(g);
  const ms: number[] = [];
  const used = new Map<number, number>();
  try {
    for (let s = 0; s < settle + steps; s++) {
      const threads = g.threads;
      g.beforeStep();
      const t0 = performance.now();
      await step();
      const dt = performance.now() - t0;
      g.afterStep(dt);
      if (s >= settle) {
        ms.push(dt);
        used.set(threads, (used.get(threads) ?? 0) + 1);
      }
    }
  } finally {
    installThreadGovernor(null);
  }
  return { ms, used };
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export async function run(ctx: BenchContext): Promise<void> {
  const configs = selectedConfigs("LOOP_BENCH_BUSY_CONFIGS", [5]);
  const native = await enableNativeKernels();
  ctx.log(native.enabled ? "native kernels" : `portable kernels (native: ${native.reason})`);
  const rounds = ctx.quick ? 1 : 3;
  const timing = ctx.quick ? { warmup: 1, repeats: 2 } : { warmup: 1, repeats: 5 };
  // the busy process takes the last core: the engine's pool uses the first ones
  const core = ctx.cores - 1;
  const rows: Row[] = [];
  const settle = ctx.quick ? 5 : SETTLE;
  const steps = ctx.quick ? 10 : GOVERNED;
  for (const c of configs) {
    const step = makeStep(c);
    const tokens = c.batch * c.seq;
    const ms = new Map<string, number[]>();
    let placement = "";
    const max = Math.max(...ctx.threadCounts);
    const auto = {
      ms: new Map<boolean, number[]>(),
      used: new Map<boolean, Map<number, number>>(),
    };
    for (let round = 0; round < rounds; round++) {
      for (const threads of [...ctx.threadCounts, "auto" as const]) {
        await ctx.setThreads(threads === "auto" ? max : threads);
        for (const busy of [false, true]) {
          let proc: BusyProcess | undefined;
          if (busy) proc = await startBusyProcess(core);
          try {
            if (threads === "auto") {
              const r = await governed(step, max, settle, steps);
              auto.ms.set(busy, [...(auto.ms.get(busy) ?? []), ...r.ms]);
              const u = auto.used.get(busy) ?? new Map<number, number>();
              for (const [t, n] of r.used) u.set(t, (u.get(t) ?? 0) + n);
              auto.used.set(busy, u);
              continue;
            }
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
    const row = (threads: number | string, q: number, b: number): Row => ({
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
    for (const threads of ctx.threadCounts)
      rows.push(
        row(threads, median(ms.get(`${threads}/false`)!), median(ms.get(`${threads}/true`)!)),
      );
    rows.push(row(`auto (max ${max})`, mean(auto.ms.get(false)!), mean(auto.ms.get(true)!)));
    const usedText = (busy: boolean) =>
      [...auto.used.get(busy)!.entries()]
        .sort(([x], [y]) => x - y)
        .map(([t, n]) => `${n}×${t}`)
        .join(" ");
    ctx.log(
      `  ${c.name}: busy process ${placement}; auto: steps per thread count quiet ${usedText(false)}, busy ${usedText(true)}`,
    );
  }
  ctx.table(
    rows,
    `training step, medians over ${rounds} alternating quiet/busy rounds; busy = one single-threaded ` +
      "spinning process on the last core; busy/quiet ≤ 2 and 'busy vs 1 thread busy' ≥ 1 are the targets " +
      `(> 1 = faster than 1 thread); auto = all threads under the thread governor, mean over ${steps} steps after ${settle} (probes included)`,
  );
}
