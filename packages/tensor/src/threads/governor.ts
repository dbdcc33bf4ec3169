/*
 * An adaptive thread count for repeated steps (a training loop). On a machine that is not idle, a
 * thread that shares its core with another process stalls every hand-off of every parallel
 * kernel, so all cores can be several times slower than one thread. The governor times each
 * step; now and then it runs a short probe of steps on the other candidate count (1 when it
 * uses all threads, all when it uses 1), and keeps whichever was faster. Probes back off while
 * the choice holds (the interval doubles, or quadruples when a one-step probe was clearly
 * slower) and come back at once when steps slow down (another job started). Switching changes
 * no number: every kernel gives the same bits on any thread count. Browser-safe; the caller
 * supplies the step times.
 */
import { setThreadLimit } from "./pool.js";

/**
 * How the thread governor probes: the thread counts it chooses between, and how many steps it
 * measures.
 */
export interface GovernorOptions {
  /** All the pool's threads (the other candidate is 1). */
  max: number;
  /** Steps ignored at the start (allocation, first-touch). Default 2. */
  warmup?: number;
  /** Steps in a probe; one suffices when it is clearly slower (`slowdown`). Default 3. */
  probeSteps?: number;
  /** Measured steps before the first probe. Default 3. */
  firstProbe?: number;
  /** Steps between probes after a switch; grows while the choice holds. Default 16. */
  interval?: number;
  /** Longest interval between probes. Default 512. */
  maxInterval?: number;
  /** A switch needs the probe's median below this fraction of the current median. Default 0.9. */
  margin?: number;
  /**
   * Probe at once when the last steps are this much slower than at the last decision; end a
   * probe after one step that is this much slower than the current count. Default 1.5.
   */
  slowdown?: number;
  /** Told of every switch (e.g. to log it). */
  onSwitch?: (d: GovernorDecision) => void;
}

/**
 * One probe of the thread governor: when, from and to which thread count, and the step times it
 * compared.
 */
export interface GovernorDecision {
  /** Steps seen when the probe ended. */
  step: number;
  from: number;
  to: number;
  currentMs: number;
  probeMs: number;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Chooses per training step between all the pool's threads and one, by timing probes: a busy
 * machine can run a step faster on one thread.
 */
export class ThreadGovernor {
  /** The thread count chosen between probes. */
  chosen: number;
  /** Every probe's outcome, in order (to = from when the choice held). */
  readonly decisions: GovernorDecision[] = [];
  private readonly o: Required<GovernorOptions>;
  private seen = 0;
  private recent: number[] = [];
  private probe: number[] | null = null;
  private interval: number;
  private sinceProbe = 0;
  private reference = Number.POSITIVE_INFINITY;

  constructor(opts: GovernorOptions) {
    if (!Number.isInteger(opts.max) || opts.max < 1)
      throw new Error(`ThreadGovernor: max must be an integer ≥ 1, got ${opts.max}`);
    this.o = {
      onSwitch: () => {},
      warmup: 2,
      probeSteps: 3,
      firstProbe: 3,
      interval: 16,
      maxInterval: 512,
      margin: 0.9,
      slowdown: 1.5,
      ...opts,
    };
    this.chosen = opts.max;
    this.interval = this.o.firstProbe;
  }

  /** The thread count the next step runs on. */
  get threads(): number {
    return this.probe ? this.other() : this.chosen;
  }

  private other(): number {
    return this.chosen === this.o.max ? 1 : this.o.max;
  }

  /** Set the pool's thread limit for the next step. */
  beforeStep(): void {
    setThreadLimit(this.threads);
  }

  /** Record the step just run (its wall-clock milliseconds). */
  afterStep(ms: number): void {
    this.seen++;
    if (this.o.max === 1 || this.seen <= this.o.warmup || !Number.isFinite(ms)) return;
    if (this.probe) {
      this.probe.push(ms);
      const clearlySlower = ms > this.o.slowdown * this.current();
      if (clearlySlower || this.probe.length >= this.o.probeSteps)
        this.decide(this.probe, clearlySlower);
      return;
    }
    this.recent.push(ms);
    if (this.recent.length > 8) this.recent.shift();
    this.sinceProbe++;
    const last = this.recent.slice(-3);
    const slowed = last.length === 3 && median(last) > this.o.slowdown * this.reference;
    if (slowed) this.interval = this.o.interval;
    if (this.recent.length >= 3 && (this.sinceProbe >= this.interval || slowed)) this.probe = [];
  }

  /** The current count's recent step time. */
  private current(): number {
    return median(this.recent.slice(-Math.max(3, this.o.probeSteps)));
  }

  /** `clear`: the probe ended early, its one step clearly slower. */
  private decide(probe: number[], clear: boolean): void {
    const current = this.current();
    const probed = median(probe);
    const from = this.chosen;
    const to = probed < this.o.margin * current ? this.other() : from;
    this.decisions.push({ step: this.seen, from, to, currentMs: current, probeMs: probed });
    if (to !== from) {
      this.o.onSwitch(this.decisions.at(-1)!);
      this.chosen = to;
      this.recent = [...probe];
      this.interval = this.o.interval;
    } else {
      // a clear answer backs off faster: on a busy machine each probe of all threads costs
      // several steps' time
      const grow = clear ? 4 : 2;
      this.interval = Math.min(Math.max(grow * this.interval, this.o.interval), this.o.maxInterval);
    }
    this.reference = median(this.recent);
    this.probe = null;
    this.sinceProbe = 0;
  }

  /** Hand all threads back (the pool's own count). */
  release(): void {
    setThreadLimit(null);
  }
}

let installed: ThreadGovernor | null = null;

/**
 * Install (null: remove) the governor that training loops consult around each step
 * (`beforeStep`/`afterStep`); removing one hands all threads back.
 */
export function installThreadGovernor(g: ThreadGovernor | null): void {
  installed?.release();
  installed = g;
}

/** The installed governor, if any. */
export function threadGovernor(): ThreadGovernor | null {
  return installed;
}
