/*
 * A mixed-difficulty gate study by difficulty: for each number of hops p, the accuracy of fixed
 * exit at every loop step and of the gate at every q, and the gate's mean exit step, each the
 * mean over seeds of that seed's evaluation on the eval rows of that p. Does the gate exit early
 * on the easy sequences, and late on the hard ones?
 */
import { formatTable, type Metric } from "@loop/eval";
import type { SeedGateResult } from "./gate-frontier.js";
import { formatMeanSd, meanSd } from "./stats.js";

/** One difficulty, aggregated over seeds. */
export interface HopsRow {
  hops: number;
  /** Eval rows with this p (the eval set is the same in every seed). */
  count: number;
  /** Fixed exit at step r = index + 1: per-seed values. */
  perStep: number[][];
  /** Per q: the gate's mean exit step and metric per seed. */
  gated: { q: number; step: number[]; value: number[] }[];
}

/** The by-difficulty rows of seeds evaluated with `byHops` (an error naming a seed without it). */
export function hopsRows(seeds: readonly SeedGateResult[]): HopsRow[] {
  const first = seeds[0]?.byHops;
  if (!first) throw new Error("hopsRows: the seeds were not evaluated by difficulty");
  return first.map((h0) => {
    const per = seeds.map((s, k) => {
      const h = s.byHops?.find((x) => x.hops === h0.hops);
      if (!h) throw new Error(`hopsRows: seed ${k + 1} has no evaluation at p = ${h0.hops}`);
      return h;
    });
    return {
      hops: h0.hops,
      count: h0.count,
      perStep: h0.perStep.map((_, r) => per.map((h) => h.perStep[r]!)),
      gated: h0.gated.map((g) => ({
        q: g.q,
        step: per.map((h) => h.gated.find((x) => x.q === g.q)!.mean_step),
        value: per.map((h) => h.gated.find((x) => x.q === g.q)!.value),
      })),
    };
  });
}

/** Metric by difficulty: fixed exit at each step, then the gate at each q (mean ± sd). */
export function hopsMetricTable(rows: readonly HopsRow[], metric: Metric, md: boolean): string {
  const R = rows[0]!.perStep.length;
  const head = [
    "p (hops)",
    "rows",
    ...Array.from({ length: R }, (_, r) => `fixed exit ${r + 1}`),
    ...rows[0]!.gated.map((g) => `gate q = ${g.q}`),
  ];
  const body = rows.map((h) => [
    String(h.hops),
    String(h.count),
    ...h.perStep.map((v) => formatMeanSd(meanSd(v), metric)),
    ...h.gated.map((g) => formatMeanSd(meanSd(g.value), metric)),
  ]);
  return formatTable(head, body, (i) => i > 0, md ? "markdown" : "text");
}

/** The gate's mean exit step by difficulty, at each q (mean ± sd over seeds). */
export function hopsStepTable(rows: readonly HopsRow[], md: boolean): string {
  const head = ["p (hops)", ...rows[0]!.gated.map((g) => `gate q = ${g.q}: mean exit step`)];
  const body = rows.map((h) => [
    String(h.hops),
    ...h.gated.map((g) => {
      const m = meanSd(g.step);
      return `${m.mean.toFixed(2)} ± ${m.sd.toFixed(2)}`;
    }),
  ]);
  return formatTable(head, body, (i) => i > 0, md ? "markdown" : "text");
}
