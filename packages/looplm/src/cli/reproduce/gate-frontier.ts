/**
 * The exit-gate study's depth/metric frontier: at every q the gate's mean selected exit step and
 * metric, against fixed exit at every loop step 1..R, aggregated over seeds; and the claim's
 * verdict. The comparison at equal depth interpolates fixed exit linearly between the two loop
 * steps around the gate's mean step (a model that exits at step r on a fraction of tokens and at
 * r+1 on the rest can do exactly that by mixing fixed exits).
 */
import type { GatedPoint, Metric } from "@loop/eval";
import { type MeanSd, meanSd } from "./stats.js";

export interface SeedGateResult {
  metric: Metric;
  /** Fixed exit at loop step r = index + 1. */
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
    });
  }
  return rows;
}

/**
 * The claim "at a comparable mean depth the gate beats fixed exit": holds when at most q values
 * the gate lies above the fixed-exit frontier at its own depth in every seed.
 */
export function gateVerdict(rows: readonly FrontierRow[], metric: Metric): string {
  const gates = rows.filter((r) => r.kind === "gate");
  const wins = gates.filter((r) => r.gain!.every((g) => g > 0));
  const ok = wins.length * 2 > gates.length;
  const unit = (v: number) =>
    metric === "accuracy" ? `${(100 * v).toFixed(2)} points` : v.toFixed(2);
  const detail = gates
    .map((r) => {
      const mean = r.gain!.reduce((a, b) => a + b, 0) / r.gain!.length;
      return `q=${r.q}: depth ${r.depth.mean.toFixed(2)}, ${mean >= 0 ? "+" : "−"}${unit(Math.abs(mean))}`;
    })
    .join("; ");
  return `${ok ? "holds" : "does not hold at this scale"}: the gate beats fixed exit at its own mean depth at ${wins.length}/${gates.length} q values in every seed (${detail})`;
}
