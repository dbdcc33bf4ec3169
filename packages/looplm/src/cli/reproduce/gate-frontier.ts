/*
 * The exit-gate study's depth/metric frontier: at every q the gate's mean selected exit step and
 * metric, against fixed exit at every loop step 1..R, aggregated over seeds; and the claim's
 * verdict. The comparison at equal depth interpolates fixed exit linearly between the two loop
 * steps around the gate's mean step (a model that exits at step r on a fraction of tokens and at
 * r+1 on the rest can do exactly that by mixing fixed exits).
 * Every row keeps its per-seed numbers (printed in the per-seed table).
 */
import type { GatedPoint, Metric } from "@loop/eval";
import { type Interval, MIN_SEEDS, readInterval, tInterval, type VerdictKind } from "./interval.js";
import { type MeanSd, meanSd, seedCount } from "./stats.js";

export interface SeedGateResult {
  metric: Metric;
  /** Fixed exit at loop step r = index + 1. */
  perStep: number[];
  gated: GatedPoint[];
  /** A mixed-difficulty study: the same evaluation on the eval rows of each p apart. */
  byHops?: HopsGateResult[];
}

/** The evaluation of the eval rows with one number of hops p. */
export interface HopsGateResult {
  hops: number;
  /** Eval rows with this p. */
  count: number;
  perStep: number[];
  gated: GatedPoint[];
}

export interface FrontierRow {
  kind: "fixed" | "gate";
  /** "fixed exit r" or "gate q = 0.5". */
  label: string;
  q: number | null;
  depth: MeanSd;
  value: MeanSd;
  /** Gate rows: metric minus the interpolated fixed-exit metric at the same depth, per seed. */
  gain: number[] | null;
  /** The mean exit step in each seed. */
  depthPerSeed: number[];
  /** The metric in each seed. */
  valuePerSeed: number[];
}

/** Fixed-exit metric at a fractional depth in [1, R]. */
export function fixedAt(perStep: readonly number[], depth: number): number {
  const R = perStep.length;
  const d = Math.min(Math.max(depth, 1), R);
  const lo = Math.floor(d);
  const hi = Math.min(lo + 1, R);
  const f = d - lo;
  return perStep[lo - 1]! * (1 - f) + perStep[hi - 1]! * f;
}

export function gateFrontier(seeds: readonly SeedGateResult[]): FrontierRow[] {
  if (seeds.length === 0) throw new Error("gateFrontier: no seeds");
  const m = seeds[0]!.metric;
  const better = (a: number, b: number) => (m === "accuracy" ? a - b : b - a);
  const R = seeds[0]!.perStep.length;
  const rows: FrontierRow[] = [];
  for (let r = 1; r <= R; r++)
    rows.push({
      kind: "fixed",
      label: `fixed exit ${r}`,
      q: null,
      depth: meanSd(seeds.map(() => r)),
      value: meanSd(seeds.map((s) => s.perStep[r - 1]!)),
      gain: null,
      depthPerSeed: seeds.map(() => r),
      valuePerSeed: seeds.map((s) => s.perStep[r - 1]!),
    });
  for (const g of seeds[0]!.gated) {
    const pts = seeds.map((s, k) => {
      const p = s.gated.find((x) => x.q === g.q);
      if (!p) throw new Error(`gateFrontier: seed ${k + 1} has no gate point at q = ${g.q}`);
      return { p, s };
    });
    rows.push({
      kind: "gate",
      label: `gate q = ${g.q}`,
      q: g.q,
      depth: meanSd(pts.map(({ p }) => p.mean_step)),
      value: meanSd(pts.map(({ p }) => p.value)),
      gain: pts.map(({ p, s }) => better(p.value, fixedAt(s.perStep, p.mean_step))),
      depthPerSeed: pts.map(({ p }) => p.mean_step),
      valuePerSeed: pts.map(({ p }) => p.value),
    });
  }
  return rows;
}

/** One gate point's reading: its per-seed gains over fixed exit at equal depth, and their CI. */
export interface GatePointVerdict {
  q: number;
  depth: MeanSd;
  /** Per seed: gate metric minus interpolated fixed exit (better-oriented: > 0 is a win). */
  gains: number[];
  interval: Interval;
  /** null: left out (the point exits every token at step R in every seed). */
  kind: VerdictKind | null;
}

export interface GateVerdict {
  kind: VerdictKind;
  line: string;
  points: GatePointVerdict[];
}

/** Mean exit steps within this of R count as "always the last step". */
const AT_R = 1e-9;

/**
 * The claim "at a comparable mean depth the gate beats fixed exit", read point by point: each q's
 * per-seed gain over the fixed-exit frontier at the gate's own depth gets a 95 % t-interval
 * (holds / inconclusive / contradicted against 0, at least MIN_SEEDS seeds). A point whose mean
 * exit step is R in every seed exits every token at the last step: it is fixed exit R, its gain is
 * 0 by construction, so it is left out (listed as such). The claim holds when most judged points
 * hold, is contradicted when most are contradicted, and is inconclusive otherwise (or when no
 * point can be judged).
 */
export function gateVerdict(
  rows: readonly FrontierRow[],
  metric: Metric,
  minSeeds = MIN_SEEDS,
): GateVerdict {
  const R = rows.filter((r) => r.kind === "fixed").length;
  const points: GatePointVerdict[] = rows
    .filter((r) => r.kind === "gate")
    .map((r) => {
      const gains = r.gain!;
      const interval = tInterval(gains);
      const atR = r.depthPerSeed.every((d) => Math.abs(d - R) <= AT_R);
      return {
        q: r.q!,
        depth: r.depth,
        gains,
        interval,
        kind: atR ? null : readInterval(interval, 0, minSeeds).kind,
      };
    });
  const judged = points.filter((p) => p.kind !== null);
  const count = (k: VerdictKind) => judged.filter((p) => p.kind === k).length;
  const kind: VerdictKind =
    judged.length > 0 && count("holds") * 2 > judged.length
      ? "holds"
      : judged.length > 0 && count("contradicted") * 2 > judged.length
        ? "contradicted"
        : "inconclusive";
  const pts = metric === "accuracy";
  const f = (v: number) => {
    const x = pts ? 100 * v : v;
    return `${x < 0 ? "−" : "+"}${Math.abs(x).toFixed(2)}`;
  };
  const u = pts ? " points" : "";
  const detail = points
    .map((p) => {
      const seeds = `per seed ${p.gains.map(f).join(", ")}`;
      if (p.kind === null)
        return `q=${p.q}: depth ${p.depth.mean.toFixed(2)} = R in every seed, left out (it is fixed exit ${R})`;
      const ci = Number.isNaN(p.interval.lo)
        ? "CI n/a"
        : `95 % CI [${f(p.interval.lo)}, ${f(p.interval.hi)}]`;
      return `q=${p.q}: depth ${p.depth.mean.toFixed(2)}, gain ${f(p.interval.mean)}${u} (${seeds}), ${ci} → ${p.kind}`;
    })
    .join("; ");
  const n = rows[0]?.value.n ?? 0;
  const few = n < minSeeds ? ` (${seedCount(n)} < ${minSeeds})` : "";
  const line = `${kind}${few}: the gate beats fixed exit at its own mean depth at ${count("holds")} of ${judged.length} judged q values, is beaten at ${count("contradicted")} (gain = gate − fixed exit interpolated at the gate's depth, paired per seed; points at depth R are left out): ${detail}`;
  return { kind, line, points };
}
