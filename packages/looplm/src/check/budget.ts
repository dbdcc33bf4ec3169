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

/** A speed case the budget left out, and the seconds it was estimated to need. */
export interface DroppedCase {
  name: string;
  estimateS: number;
}

/**
 * What the budget dropped, in one sentence: the seconds left when it started dropping, the
 * seconds the dropped cases were estimated to need, and the budget that would have run them.
 */
export function droppedSummary(
  dropped: readonly DroppedCase[],
  leftS: number | null,
  budgetS: number,
): string {
  const needS = dropped.reduce((s, d) => s + d.estimateS, 0);
  const left = leftS ?? 0;
  const minutes = Math.ceil((budgetS - left + needS) / 60);
  const each = dropped.map((d) => `${d.name} (~${secondsText(d.estimateS)})`).join("; ");
  return `${dropped.length} speed case(s) estimated at ~${secondsText(needS)} in all, with ${secondsText(left)} of the budget left (--budget ${minutes}m would run them): ${each}`;
}

/** `12 s`, `3.2 min`: an estimate as read. */
function secondsText(s: number): string {
  return s < 10
    ? `${s.toFixed(1)} s`
    : s < 100
      ? `${s.toFixed(0)} s`
      : `${(s / 60).toFixed(1)} min`;
}

/**
 * The budget's ruling on each speed case, cheapest first: a case runs while the time left covers
 * its estimate (its flops over the slowest rate measured so far, times `margin`); from the first
 * that does not fit, every later (slower) case is dropped.
 */
export class SpeedPlanner {
  private rate: number;
  private stopped = false;
  /** The dropped cases, in the order they came, each with the seconds it was estimated to take. */
  readonly dropped: DroppedCase[] = [];
  /** Seconds of the budget left when the first case was dropped (null: none was). */
  leftS: number | null = null;

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
    const now = this.now();
    if (!this.stopped && now + estimate <= this.deadline) return true;
    if (!this.stopped) this.leftS = Math.max(0, this.deadline - now);
    this.stopped = true;
    this.dropped.push({ name, estimateS: estimate });
    return false;
  }

  /** A case of `flops` took `seconds`: later estimates use the slowest rate seen. */
  measured(flops: number, seconds: number): void {
    if (seconds > 0) this.rate = Math.min(this.rate, flops / seconds);
  }
}
