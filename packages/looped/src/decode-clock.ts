/*
 * The decode rates `looplm generate --timing` and the GPU node's decode row print (as llama.cpp
 * prints its timings): the
 * prefill rate (prompt tokens over the time to the first sampled token), the decode rate over
 * every later token, and over the first and the last 64 of them — a cost that grows with the
 * position shows as last64 < first64 — and the mean exit step of the generated tokens. The time
 * spent printing a token is not counted: the clock stops when a token arrives and starts again
 * once it is printed.
 */
/** One JSON line of `generate --timing`. */
export interface DecodeTiming {
  prefill_tok_s: number | null;
  decode_tok_s: number | null;
  first64_tok_s: number | null;
  last64_tok_s: number | null;
  mean_exit_step: number;
}

/** Tokens per second over `ms` milliseconds, rounded to 3 significant digits (null: no tokens). */
function rate(tokens: number, ms: number): number | null {
  if (tokens === 0 || !(ms > 0)) return null;
  return Number((tokens / (ms / 1000)).toPrecision(3));
}

/** A clock over one generation (see the file comment). */
export interface DecodeClock {
  /** A token was sampled now. */
  arrived(): void;
  /** The token is handled (printed): the clock runs again. */
  resume(): void;
  /** The rates, for a prompt of `promptTokens` and the generated tokens' exit steps. */
  summary(promptTokens: number, exitSteps: readonly number[]): DecodeTiming;
}

/** A clock started now (see the file comment). */
export function decodeClock(): DecodeClock {
  const start = performance.now();
  let since = start;
  let first: number | null = null;
  const gaps: number[] = [];
  return {
    arrived(): void {
      const now = performance.now();
      if (first === null) first = now - start;
      else gaps.push(now - since);
      since = now;
    },
    resume(): void {
      since = performance.now();
    },
    summary(promptTokens: number, exitSteps: readonly number[]): DecodeTiming {
      const sum = (a: readonly number[]) => a.reduce((x, y) => x + y, 0);
      const head = gaps.slice(0, 64);
      const tail = gaps.slice(-64);
      return {
        prefill_tok_s: first === null ? null : rate(promptTokens, first),
        decode_tok_s: rate(gaps.length, sum(gaps)),
        first64_tok_s: rate(head.length, sum(head)),
        last64_tok_s: rate(tail.length, sum(tail)),
        mean_exit_step: Number((sum(exitSteps) / Math.max(1, exitSteps.length)).toFixed(3)),
      };
    },
  };
}
