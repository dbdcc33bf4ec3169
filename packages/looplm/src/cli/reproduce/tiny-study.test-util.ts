/**
 * Test support: the tiny settings the study tests train with (a 3-symbol p-hop task, an 8-wide
 * Mamba-2, a few steps), so that a study runs in seconds on the portable kernels.
 */
import type { RunFacts } from "./study-report.js";
import type { ArmDef, StudyDef } from "./study-types.js";

export const TINY_TASK = { task: "phop", alphabet: 3, length: 8, hops: 2 } as const;
export const TINY_MODEL = { dModel: 8, dState: 4, headdim: 8, chunk: 8 };

/** `steps` training steps of batch 4, no evaluation before the end, no checkpoints. */
export function tinyTrain(steps: number): ArmDef["train"] {
  return { steps, batch: 4, warmup: 0, evalEvery: 0, evalCount: 8, ckptEvery: 0 };
}

/**
 * The iso-param arm (1⊗1, 1⊗2) trained `steps` steps, then any `more` arms, and its one claim
 * "loops help" (1⊗2 beats 1⊗1).
 */
export function tinyStudy(steps: number, paper: ArmDef["paper"], more: ArmDef[] = []): StudyDef {
  return {
    name: "tiny",
    title: "tiny",
    notes: "tiny settings for tests",
    arms: [
      {
        id: "iso-param",
        protocol: "iso-param",
        task: TINY_TASK,
        model: TINY_MODEL,
        base: 1,
        loops: [1, 2],
        train: tinyTrain(steps),
        paper,
      },
      ...more,
    ],
    claims: [
      { kind: "better", text: "loops help", a: "iso-param/1⊗2", b: "iso-param/1⊗1", minGap: 0 },
    ],
  };
}

/** The run facts a tiny study's written output carries: fixed, so the written files compare. */
export const TINY_FACTS: RunFacts = {
  study: "tiny",
  title: "Tiny",
  notes: "n",
  scale: "cpu",
  seeds: 2,
  command: "looplm reproduce tiny",
  wallSeconds: 1,
  loadStart: [1, 2, 3],
  loadEnd: [1, 2, 3],
};
