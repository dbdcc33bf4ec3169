/**
 * Wall-clock timing: `warmup` untimed runs, then `repeats` timed runs; median is the figure.
 * Also the process CPU time (all threads) per run: on a busy machine, work / CPU time says what
 * the code achieves per core it actually got, where wall time mostly measures the other load.
 */
export interface TimeOptions {
  warmup?: number;
  repeats?: number;
}

export interface Timing {
  medianMs: number;
  minMs: number;
  maxMs: number;
  samplesMs: number[];
  /** Median process CPU time (user + system, all threads) of the timed runs. */
  cpuMs: number;
  cpuSamplesMs: number[];
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export async function time(fn: () => unknown, opts: TimeOptions = {}): Promise<Timing> {
  const warmup = opts.warmup ?? 2;
  const repeats = Math.max(1, opts.repeats ?? 7);
  for (let i = 0; i < warmup; i++) await fn();
  const samplesMs: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await fn();
    samplesMs.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  return {
    medianMs: median(samplesMs),
    minMs: Math.min(...samplesMs),
    maxMs: Math.max(...samplesMs),
    samplesMs,
    cpuMs: median(cpu),
    cpuSamplesMs: cpu,
  };
}
