/*
 * The paper's experiments as `looplm reproduce` studies, at two scales: "paper" (the paper's
 * sizes, docs/experiments.md; hours to days on a CPU) and "cpu" (chosen by the pilot runs in
 * docs/results/pilots.md for a 2-core machine; the measured times are in `reproduce --help` and
 * docs/results.md). Paper numbers are as the paper prints them. Each family of studies has its
 * own file; this one names them and finds one by name.
 */
import { ablations, backboneBudget, backbones } from "./backbone-studies.js";
import { type ExitRulesStudyDef, exitRules, exitRulesLm } from "./exit-rules-study.js";
import { exitGate, gateMixed, lmGate } from "./gate-studies.js";
import type { GateStudyDef } from "./gate-study-types.js";
import { lm } from "./lm-study.js";
import { mano } from "./mano-study.js";
import { depth, phop } from "./phop-studies.js";
import type { Scale, StudyDef } from "./study-types.js";

export const STUDY_NAMES = [
  "phop",
  "depth",
  "mano",
  "lm",
  "backbones",
  "backbone-budget",
  "ablations",
  "exit-gate",
  "gate-mixed",
  "lm-gate",
  "exit-rules",
  "exit-rules-lm",
] as const;
export type StudyName = (typeof STUDY_NAMES)[number];
/** The studies that are protocol sweeps (not the gate studies, not exit-rules). */
export type SweepStudyName = Exclude<StudyName, GateStudyName | ExitRulesStudyName>;
/** The studies that run every exit rule on a gate study's models. */
export type ExitRulesStudyName = "exit-rules" | "exit-rules-lm";

/** True for the exit-rules studies. */
export function isExitRulesStudy(name: StudyName): name is ExitRulesStudyName {
  return name === "exit-rules" || name === "exit-rules-lm";
}
/** The studies that train the exit gate's three stages. */
export type GateStudyName = "exit-gate" | "gate-mixed" | "lm-gate";

/** True for the studies that train the exit gate's three stages. */
export function isGateStudy(name: StudyName): name is GateStudyName {
  return name === "exit-gate" || name === "gate-mixed" || name === "lm-gate";
}

/** True for the protocol-sweep studies. */
export function isSweepStudy(name: StudyName): name is SweepStudyName {
  return !isGateStudy(name) && !isExitRulesStudy(name);
}

/** The gate studies, each at cpu scale or the paper's. */
export function gateStudy(name: GateStudyName, scale: Scale): GateStudyDef {
  return name === "gate-mixed"
    ? gateMixed(scale)
    : name === "lm-gate"
      ? lmGate(scale)
      : exitGate(scale);
}

/** The sweep studies, each at cpu scale (true) or the paper's. */
const SWEEP_STUDIES = {
  phop,
  depth,
  mano,
  lm,
  backbones,
  "backbone-budget": backboneBudget,
  ablations,
};

export function sweepStudy(name: SweepStudyName, scale: Scale): StudyDef {
  const def = SWEEP_STUDIES[name](scale === "cpu");
  const lentTo = lentArms(scale)[name];
  return lentTo ? { ...def, lentTo } : def;
}

/**
 * For each study that lends arms (by name): each lent arm's id and the studies that borrow it.
 * Keyed by the name `sharedWith` gives, so no cast is needed; `sweepStudy` looks up its own.
 */
type LentArms = Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;

/** Per scale, built once and frozen: every `sweepStudy()` of a scale hands out the same arrays. */
const LENT = new Map<Scale, LentArms>();

function lentArms(scale: Scale): LentArms {
  const cached = LENT.get(scale);
  if (cached) return cached;
  const lent: Record<string, Record<string, string[]>> = {};
  for (const [borrower, make] of Object.entries(SWEEP_STUDIES)) {
    for (const arm of make(scale === "cpu").arms) {
      if (!arm.sharedWith) continue;
      const { study, arm: id } = arm.sharedWith;
      ((lent[study] ??= {})[id] ??= []).push(borrower);
    }
  }
  for (const arms of Object.values(lent)) {
    for (const borrowers of Object.values(arms)) Object.freeze(borrowers);
    Object.freeze(arms);
  }
  LENT.set(scale, Object.freeze(lent));
  return lent;
}

/** The exit-rules studies, each at cpu scale or the paper's. */
export function exitRulesStudy(name: ExitRulesStudyName, scale: Scale): ExitRulesStudyDef {
  return name === "exit-rules-lm" ? exitRulesLm(scale) : exitRules(scale);
}
