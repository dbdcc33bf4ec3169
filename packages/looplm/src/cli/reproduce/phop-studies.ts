/*
 * The p-hop studies at cpu scale (docs/results/pilots.md chose their sizes) and the paper's: `phop`
 * (1⊗1, 1⊗4 and 4⊗1 under dense and answer-only targets) and `depth` (1⊗R, R⊗1 and 1⊗1 for
 * p = R hops as R grows, its R = 4 arm shared with `phop`).
 */
import { shareArm } from "./shared-arm.js";
import { beats, loopedVsDeep } from "./study-claims.js";
import type { ArmDef, ClaimDef, StudyDef } from "./study-types.js";

/**
 * Answer-only p-hop training steps at cpu scale (docs/results/pilots.md, round G): the pilot's
 * 1⊗4 was still climbing at the end of a 4,000-step cosine, so the study trains twice as long.
 */
const PHOP_ANSWER_ONLY_STEPS = 8000;
/**
 * The depth sweep's training steps at cpu scale, per R (docs/results/pilots.md, round G): 1⊗2
 * learns answer-only p = 2 within 2,000 steps; R = 3 and R = 4 get the answer-only p-hop budget
 * (R = 4 is the p-hop study's answer-only arm itself).
 */
const DEPTH_STEPS: Record<number, number> = {
  2: 2000,
  3: PHOP_ANSWER_ONLY_STEPS,
  4: PHOP_ANSWER_ONLY_STEPS,
};

/** The p-hop studies' layer at cpu scale (the pilots' budget, docs/results/pilots.md). */
export const PHOP_MAMBA = { dModel: 128, dState: 16, headdim: 16, chunk: 32, loopNorm: true };

/** The p-hop training signals: every prefix's own answer, or the one answer at position n. */
const SIGNALS = {
  dense: "dense targets (every prefix's own answer)",
  "answer-only": "answer-only targets (one per sequence, at position n)",
} as const;

/**
 * Training at cpu scale under each signal (the pilots, docs/results/pilots.md): dense targets
 * learn in 2,000 steps; one target per sequence needs PHOP_ANSWER_ONLY_STEPS.
 */
const PHOP_STEPS = { dense: 2000, "answer-only": PHOP_ANSWER_ONLY_STEPS } as const;

function phopPaper(): StudyDef {
  return {
    name: "phop",
    title: "p-hop induction: recursive depth vs distinct parameters",
    notes: "The paper's n = 256, p = 16, answer-only targets.",
    arms: [
      {
        id: "iso-param",
        protocol: "iso-param",
        task: { task: "phop", alphabet: 4, length: 256, hops: 16 },
        model: { dModel: 64, dState: 16, headdim: 16, chunk: 64 },
        base: 1,
        loops: [1, 12],
        train: { steps: 20000, batch: 32, lr: 1e-3, warmup: 500, evalEvery: 1000, evalCount: 1000 },
        paper: { "1⊗1": "38–41 % (n=256, p=16/32)", "1⊗12": "99.89 % (1⊗12)" },
      },
    ],
    claims: [
      {
        kind: "below",
        text: "a shallow non-looped Mamba fails p-hop induction",
        member: "iso-param/1⊗1",
        threshold: 0.5,
      },
      beats(
        "looping the same layer fixes it: 1⊗12 beats 1⊗1 with the same parameters",
        "iso-param/1⊗12",
        "iso-param/1⊗1",
        0.15,
      ),
    ],
  };
}

/** The cpu-scale p-hop study's hops (p = R = 4: the looped 1⊗4 against 4⊗1). */
const PHOP_R = 4;

/** The cpu-scale p-hop study's arm for one training signal (also the depth sweep's R = 4 arm). */
function phopArm(signal: keyof typeof SIGNALS): ArmDef {
  const R = PHOP_R;
  return {
    id: signal,
    protocol: "iso-flops",
    task: { task: "phop", alphabet: 4, length: 32, hops: R, dense: signal === "dense" },
    model: PHOP_MAMBA,
    base: 1,
    loops: [1, R],
    train: {
      steps: PHOP_STEPS[signal],
      batch: 64,
      lr: 3e-3,
      warmup: 100,
      evalEvery: 250,
      evalCount: 512,
    },
    paper: { "1⊗1": "38–41 % (n=256, p=16/32)", [`1⊗${R}`]: "99.89 % (1⊗12)" },
  };
}

/** The p-hop study at cpu scale (true: both training signals) or the paper's. */
export function phop(cpu: boolean): StudyDef {
  if (!cpu) return phopPaper();
  const R = PHOP_R;
  const arm = phopArm;
  const claims = (Object.keys(SIGNALS) as (keyof typeof SIGNALS)[]).flatMap((id): ClaimDef[] => [
    {
      kind: "below",
      text: `${id}: a shallow non-looped Mamba fails p-hop induction`,
      member: `${id}/1⊗1`,
      threshold: 0.5,
    },
    beats(
      `${id}: looping the same layer fixes it, 1⊗${R} beats 1⊗1 with the same parameters`,
      `${id}/1⊗${R}`,
      `${id}/1⊗1`,
      0.15,
    ),
    loopedVsDeep(id, R, ` (${id})`),
  ]);
  return {
    name: "phop",
    title: "p-hop induction: recursive depth vs distinct parameters, under two training signals",
    notes: `|Σ| = 4, n = 32, p = ${R} hops, one Mamba-2 layer of d_model 128 with loop_norm applied once (1⊗1) or ${R} times (1⊗${R}), beside the iso-FLOPs ${R}⊗1 (${R} distinct layers), each trained under two signals: ${SIGNALS.dense}, 2,000 steps of 64, and ${SIGNALS["answer-only"]}, ${PHOP_ANSWER_ONLY_STEPS.toLocaleString("en")} steps of 64 (docs/results/pilots.md, round G: with dense targets the pilots' 1⊗${R} stops improving by step 2,000; with answer-only targets it was still climbing at the end of a 4,000-step cosine, so that arm trains twice as long); evaluation on the single answer at position n (chance 25 %).`,
    arms: [arm("dense"), arm("answer-only")],
    claims,
  };
}

/**
 * The depth sweep at cpu scale: p-hop with p = R hops for each R, answer-only targets, the
 * looped 1⊗R against the deep R⊗1 (iso-FLOPs) and 1⊗1 (iso-parameter), n = 32 for every R.
 * R = 8 is left out: at n = 48 it would cost some 7 CPU-hours for 5 seeds on a budget no pilot
 * has shown to be enough (its pilot sat at chance at step 366), so the range is 2..4, done in
 * full. Its R = 4 arm is the p-hop study's answer-only arm (the same sweep, trained once).
 */
const DEPTH_RS = [2, 3, 4] as const;
const DEPTH_LENGTH = 32;

function depthArm(R: number, cpu: boolean): ArmDef {
  const n = cpu ? DEPTH_LENGTH : 256;
  const arm: ArmDef = {
    id: `R${R}`,
    protocol: "iso-flops",
    task: { task: "phop", alphabet: 4, length: n, hops: R },
    model: cpu ? { ...PHOP_MAMBA, chunk: n } : { dModel: 64, dState: 16, headdim: 16, chunk: 64 },
    base: 1,
    loops: [1, R],
    train: cpu
      ? { steps: DEPTH_STEPS[R]!, batch: 64, lr: 3e-3, warmup: 100, evalEvery: 250, evalCount: 512 }
      : { steps: 20000, batch: 32, lr: 1e-3, warmup: 500, evalEvery: 1000, evalCount: 1000 },
    paper: {},
  };
  return cpu && R === PHOP_R ? shareArm(arm, "phop", phopArm("answer-only")) : arm;
}

/** The depth sweep at cpu scale (true) or the paper's. */
export function depth(cpu: boolean): StudyDef {
  const Rs = cpu ? DEPTH_RS : ([4, 8, 12] as const);
  const n = cpu ? DEPTH_LENGTH : 256;
  const arms: ArmDef[] = Rs.map((R) => depthArm(R, cpu));
  const [lo, hi] = [Rs[0], Rs[Rs.length - 1]];
  return {
    name: "depth",
    title: "The depth question: looped 1⊗R against the deep R⊗1 as R grows (p-hop, p = R)",
    notes: cpu
      ? `p-hop with |Σ| = 4, n = ${n} and p = R hops for R ∈ {${Rs.join(", ")}}, ${SIGNALS["answer-only"]}; one Mamba-2 layer of d_model 128 with loop_norm applied R times (1⊗R, looped) against R distinct layers (R⊗1, the same FLOPs, R× the parameters) and the layer applied once (1⊗1, the same parameters); ${Rs.map((R) => `${DEPTH_STEPS[R]!.toLocaleString("en")} steps of 64 at R = ${R}`).join(", ")} (docs/results/pilots.md, round G: 1⊗2 learns p = 2 within 2,000 steps; R = 3 and R = 4 get the answer-only p-hop study's budget, and the R = ${PHOP_R} arm is that study's answer-only arm, trained once for both), evaluation on the answer at position n (chance 25 %). R = 8 is not run at this scale: about 7 CPU-hours for 5 seeds on a budget no pilot has shown to be enough. The paper's headline is that depth made of distinct layers fails as it grows (Mano L = 24: 24⊗1 37 % against 4⊗6 99 %); the claims ask whether the looped model matches the deep one at each R and whether the deep model's deficit grows with R.`
      : `p-hop with n = ${n}, p = R hops for R ∈ {${Rs.join(", ")}}, answer-only targets (the paper's task).`,
    arms,
    depthChart: true,
    claims: [
      ...Rs.map((R) => loopedVsDeep(`R${R}`, R, ` at R = ${R}`)),
      ...Rs.map((R) =>
        beats(`iso-parameter at R = ${R}: 1⊗${R} beats 1⊗1`, `R${R}/1⊗${R}`, `R${R}/1⊗1`),
      ),
      {
        kind: "widens",
        text: `the deep model's deficit grows with R: (1⊗${hi} − ${hi}⊗1) exceeds (1⊗${lo} − ${lo}⊗1)`,
        wide: [`R${hi}/1⊗${hi}`, `R${hi}/${hi}⊗1`],
        narrow: [`R${lo}/1⊗${lo}`, `R${lo}/${lo}⊗1`],
        minGap: 0,
      },
    ],
  };
}
