/*
 * The claim shapes the studies share: "a beats b" by a margin, and the iso-FLOPs comparison of a
 * looped 1⊗R with its R distinct layers.
 */
import type { ClaimDef, ClaimTarget } from "./study-types.js";

/** The claim "a beats b" by more than `minGap` (−0.02: stays within 2 points), judged on `on`. */
export function beats(text: string, a: string, b: string, minGap = 0, on?: ClaimTarget): ClaimDef {
  return { kind: "better", text, a, b, minGap, ...(on ? { on } : {}) };
}

/** The iso-FLOPs claims of a looped 1⊗R against its R distinct layers, in one arm. */
export function loopedVsDeep(id: string, R: number, what: string): ClaimDef {
  return beats(
    `iso-FLOPs${what}: the looped 1⊗${R} matches or exceeds the deep ${R}⊗1 (within 2 points)`,
    `${id}/1⊗${R}`,
    `${id}/${R}⊗1`,
    -0.02,
  );
}
