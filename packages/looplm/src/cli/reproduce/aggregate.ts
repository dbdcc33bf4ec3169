/*
 * Seed aggregation: the sweep results of every seed of a study (one SweepFile per arm and seed)
 * → one row per member with the metric and the per-loop-step metric as mean ± sd over seeds.
 */
import type { Metric, SweepFile } from "@loop/eval";
import { type MeanSd, meanSd } from "./stats.js";

export interface MemberAggregate {
  arm: string;
  label: string;
  role: string;
  params: number;
  flops_per_token: number;
  metric: Metric;
  /** The member's final metric in each seed, in seed order. */
  values: number[];
  stat: MeanSd;
  /** Mean ± sd of the metric at every loop step. */
  perStep: MeanSd[];
  /** The downstream multiple-choice accuracy (PIQA), when the arm has one. */
  mc?: McAggregate;
  /** The downstream last-word cloze accuracy, when the arm has one. */
  cloze?: McAggregate;
  /** Mano arms: the accuracy at each expression length ℓ = 1..L (last loop step). */
  perLength?: LengthAggregate[];
}

/** The accuracy at expression length `ops` (last loop step): per seed and mean ± sd. */
export interface LengthAggregate {
  ops: number;
  values: number[];
  stat: MeanSd;
}

/** Per seed: arm id → per member label, acc[ℓ − 1][r − 1] (downstream.ts). */
export type SeedPerLength = Map<string, Record<string, number[][]>>;

export type McAggregate = Pick<MemberAggregate, "metric" | "values" | "stat" | "perStep"> & {
  /** The downstream set ("PIQA", "last-word cloze"). */
  name: string;
};

/** Per seed: arm id → the set's name and, per member label, the accuracy at every loop step. */
export type SeedDownstream = Map<string, { name: string; acc: Record<string, number[]> }>;

/** A member's final values (one per seed) and its per-loop-step values, as mean ± sd over seeds. */
function overSeeds(values: number[], perStep: readonly (readonly number[])[]) {
  const steps = perStep[0]!.length;
  return {
    values,
    stat: meanSd(values),
    perStep: Array.from({ length: steps }, (_, i) =>
      meanSd(perStep.map((p) => p[i] ?? Number.NaN)),
    ),
  };
}

/**
 * A member's downstream accuracy over seeds, when its arm has that evaluation (`what` names it in
 * errors).
 */
function downstreamOf(
  arm: string,
  label: string,
  perSeed: readonly SeedDownstream[] | undefined,
  what: string,
): McAggregate | undefined {
  // (only arms with a downstream evaluation appear in `perSeed`)
  const scored = perSeed?.some((d) => d.has(arm)) ? perSeed : undefined;
  if (!scored) return undefined;
  const acc = scored.map((d, k) => {
    const a = d.get(arm)?.acc[label];
    if (!a)
      throw new Error(`aggregateSeeds: seed ${k + 1} has no ${what} score for ${arm}/${label}`);
    return a;
  });
  return {
    name: scored.find((d) => d.has(arm))!.get(arm)!.name,
    metric: "accuracy",
    ...overSeeds(
      acc.map((a) => a[a.length - 1]!),
      acc,
    ),
  };
}

/** A member's accuracy per expression length over seeds, when its arm has that evaluation. */
function perLengthOf(
  arm: string,
  label: string,
  perSeed: readonly SeedPerLength[] | undefined,
): LengthAggregate[] | undefined {
  if (!perSeed?.some((d) => d.has(arm))) return undefined;
  const acc = perSeed.map((d, k) => {
    const a = d.get(arm)?.[label];
    if (!a)
      throw new Error(`aggregateSeeds: seed ${k + 1} has no per-length score for ${arm}/${label}`);
    return a;
  });
  return acc[0]!.map((_, i) => {
    const values = acc.map((a) => a[i]?.at(-1) ?? Number.NaN);
    return { ops: i + 1, values, stat: meanSd(values) };
  });
}

/**
 * `seeds[k]` maps arm id → that seed's sweep file; every seed must hold the same members.
 * `downstream[k]` and `cloze[k]`: that seed's multiple-choice and cloze scores; `perLength[k]`:
 * its accuracy per expression length.
 */
export function aggregateSeeds(
  armIds: readonly string[],
  seeds: readonly Map<string, SweepFile>[],
  downstream?: readonly SeedDownstream[],
  cloze?: readonly SeedDownstream[],
  perLength?: readonly SeedPerLength[],
): MemberAggregate[] {
  if (seeds.length === 0) throw new Error("aggregateSeeds: no seeds");
  const out: MemberAggregate[] = [];
  for (const arm of armIds) {
    const files = seeds.map((s, k) => {
      const f = s.get(arm);
      if (!f) throw new Error(`aggregateSeeds: seed ${k + 1} has no results for arm "${arm}"`);
      return f;
    });
    for (const row of files[0]!.rows) {
      const rows = files.map((f, k) => {
        const r = f.rows.find((x) => x.label === row.label);
        if (!r)
          throw new Error(`aggregateSeeds: seed ${k + 1} of arm "${arm}" has no ${row.label}`);
        return r;
      });
      const mc = downstreamOf(arm, row.label, downstream, "downstream");
      const cl = downstreamOf(arm, row.label, cloze, "cloze");
      const pl = perLengthOf(arm, row.label, perLength);
      out.push({
        arm,
        label: row.label,
        role: row.role,
        params: row.params,
        flops_per_token: row.flops_per_token,
        metric: files[0]!.metric,
        ...overSeeds(
          rows.map((r) => r.metric_value),
          rows.map((r) => r.per_step),
        ),
        ...(mc ? { mc } : {}),
        ...(cl ? { cloze: cl } : {}),
        ...(pl ? { perLength: pl } : {}),
      });
    }
  }
  return out;
}

/** The aggregate of member "arm/label". */
export function findMember(rows: readonly MemberAggregate[], ref: string): MemberAggregate {
  const slash = ref.indexOf("/");
  const arm = ref.slice(0, slash);
  const label = ref.slice(slash + 1);
  const m = rows.find((r) => r.arm === arm && r.label === label);
  if (!m) throw new Error(`no member ${ref} in the study's results`);
  return m;
}
