/*
 * Progress of a long evaluation: the batches of an evaluation set passed through, with a line on
 * stderr every few seconds saying how many rows are done, the rate and the time left. A short
 * evaluation prints nothing; a long one is never silent for minutes.
 */
import type { Batch, EvalBatches } from "@loop/tasks";

/** Seconds as "42 s", "7 min" or "3.2 h". */
function duration(s: number): string {
  if (!Number.isFinite(s)) return "unknown";
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/** `set`'s batches, reporting every `everyMs` on `write` how far the reader of them has got. */
export function* withEvalProgress(
  set: EvalBatches,
  label: string,
  write: (line: string) => void = (l) => process.stderr.write(l),
  everyMs = 2000,
): Generator<Batch> {
  const t0 = performance.now();
  let shown = t0;
  let done = 0;
  for (const b of set) {
    yield b;
    done += b.shape[0];
    const now = performance.now();
    if (now - shown >= everyMs && done < set.rows) {
      shown = now;
      const rate = done / ((now - t0) / 1000);
      write(
        `${label}: ${done}/${set.rows} rows (${((100 * done) / set.rows).toFixed(1)}%), ${rate.toFixed(0)} rows/s, about ${duration((set.rows - done) / rate)} left\n`,
      );
    }
  }
}
