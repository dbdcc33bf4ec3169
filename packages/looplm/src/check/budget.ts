/*
 * `--budget`: how long `looplm check` may take. Correctness always runs whole; the speed cases
 * run cheapest first while the time left covers their estimate (flops over the rate measured
 * so far, with a margin), and the rest are dropped, slowest first, and named in the report.
 */

/** "8m", "90s", "1h", "500" (seconds) as seconds; one sentence for anything else. */
export function parseBudget(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(text.trim());
  if (m && !(Number(m[1]) > 0))
    throw new Error(
      `--budget ${text.trim()} leaves no time: the correctness cases always run whole; give a duration above zero such as 8m, 90s or 1h`,
    );
  if (!m) throw new Error(`--budget: expected a duration such as 8m, 90s or 1h, got "${text}"`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600 }[(m[2] ?? "s") as "s" | "m" | "h"];
}

/**
 * The budget's ruling on each speed case, cheapest first: a case runs while the time left covers
 * its estimate (its flops over the slowest rate measured so far, times `margin`); from the first
 * that does not fit, every later (slower) case is dropped.
 */
export class SpeedPlanner {
  private rate: number;
  private stopped = false;
  /** The names of the dropped cases, in the order they came. */
  readonly dropped: string[] = [];

  /**
   * `deadline`: seconds (on `now`'s clock) by which the check must end; `rate`: the flops per
   * second assumed before any case ran (a fraction of the measured peak).
   */
  constructor(
    private readonly deadline: number,
    rate: number,
    private readonly now: () => number = () => performance.now() / 1000,
    private readonly margin = 1.5,
  ) {
    this.rate = rate;
  }

  /** Whether the case `name` of `flops` runs; if not, it is recorded as dropped. */
  admit(name: string, flops: number): boolean {
    const estimate = (flops / this.rate) * this.margin;
    if (!this.stopped && this.now() + estimate <= this.deadline) return true;
    this.stopped = true;
    this.dropped.push(name);
    return false;
  }

  /** A case of `flops` took `seconds`: later estimates use the slowest rate seen. */
  measured(flops: number, seconds: number): void {
    if (seconds > 0) this.rate = Math.min(this.rate, flops / seconds);
  }
}
