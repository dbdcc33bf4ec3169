/** Wall-clock timing: `warmup` untimed runs, then `repeats` timed runs; median is the figure. */
export interface TimeOptions {
  warmup?: number;
  repeats?: number;
}

export interface Timing {
  medianMs: number;
  minMs: number;
  maxMs: number;
  samplesMs: number[];
}

export async function time(fn: () => unknown, opts: TimeOptions = {}): Promise<Timing> {
  const warmup = opts.warmup ?? 2;
  const repeats = Math.max(1, opts.repeats ?? 7);
  for (let i = 0; i < warmup; i++) await fn();
  const samplesMs: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const t0 = performance.now();
    await fn();
    samplesMs.push(performance.now() - t0);
  }
  const s = [...samplesMs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const medianMs = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { medianMs, minMs: s[0]!, maxMs: s[s.length - 1]!, samplesMs };
}
