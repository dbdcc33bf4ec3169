/**
 * Test support: five seeds' gate results over one fixed-exit curve (0.2 → 0.6 → 0.9), so the
 * frontier and comparison tests state only what they vary — per q, the gate's depth and value in
 * each seed.
 */
import type { SeedGateResult } from "./gate-frontier.js";

export interface GatePoint {
  q: number;
  depth: number[];
  value: number[];
}

export const fiveGateSeeds = (points: GatePoint[]): SeedGateResult[] =>
  [0, 1, 2, 3, 4].map((k) => ({
    metric: "accuracy" as const,
    perStep: [0.2, 0.6, 0.9],
    gated: points.map((p) => ({
      q: p.q,
      mean_step: p.depth[k]!,
      value: p.value[k]!,
      histogram: [],
    })),
  }));
