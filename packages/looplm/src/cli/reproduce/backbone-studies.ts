/*
 * What lies behind the LM iso-parameter result: `backbones` (looped Mamba-2, hybrid and
 * Transformer), `backbone-budget` (the hybrid and Transformer at 1×, 2× and 4× the steps, the 1×
 * arms shared with `backbones`) and `ablations` (Mamba-2's budget and recipe changes).
 */
import { lmModel, lmTask, lmTrain } from "./lm-study.js";
import { shareArm } from "./shared-arm.js";
import { beats } from "./study-claims.js";
import type { ArmDef, StudyDef } from "./study-types.js";

/** The backbones the backbones study loops, and each one's model flags. */
const BACKBONES = {
  mamba: { backbone: "mamba" },
  hybrid: { backbone: "hybrid", attnLayers: "1" },
  transformer: { backbone: "transformer" },
} as const satisfies Record<string, ArmDef["model"]>;
type Backbone = keyof typeof BACKBONES;

/** The backbones study's training: the lm study's, at 1,000 steps at cpu scale. */
function backboneTrain(cpu: boolean): ArmDef["train"] {
  // (cpu: 1,000 steps, so that three backbones × two models × three seeds fit the hour)
  return { ...lmTrain(cpu), ...(cpu ? { steps: 1000 } : {}) };
}

/** One backbone's 2⊗1 and 2⊗4 on SOTU, trained `train`. */
function backboneArm(id: Backbone, cpu: boolean, train = backboneTrain(cpu)): ArmDef {
  return {
    id,
    protocol: "iso-param",
    task: lmTask(cpu),
    model: { ...lmModel(cpu), ...BACKBONES[id] },
    base: 2,
    loops: [1, 4],
    train,
    paper: { "2⊗4": "lower ppl than 2⊗1" },
  };
}

/** The backbones study at cpu scale (true) or the paper's. */
export function backbones(cpu: boolean): StudyDef {
  const ids = Object.keys(BACKBONES) as Backbone[];
  return {
    name: "backbones",
    title: "Looped Mamba-2 vs looped hybrid vs looped Transformer",
    notes:
      "SOTU as in the lm study (packed speeches reset the state and mask attention at each speech's start), 1,000 steps at cpu scale; two layers each (the hybrid's second layer is attention); the parameter counts are printed, they differ by the mixers' sizes.",
    arms: ids.map((id) => backboneArm(id, cpu)),
    claims: ids.map((id) =>
      beats(`looping helps the ${id} backbone too (2⊗4 vs 2⊗1)`, `${id}/2⊗4`, `${id}/2⊗1`),
    ),
  };
}

/**
 * The backbones study's hybrid and Transformer 2⊗1 against 2⊗4 trained 1×, 2× and 4× its steps
 * (each with its own warmup-cosine schedule), as the ablations study's budget arms do for
 * Mamba-2: does the sign of 2⊗4 − 2⊗1 turn with the budget for them too? The 1× arms are the
 * backbones study's own sweeps (shared, trained once).
 */
const BUDGETS = [1, 2, 4] as const;
const BUDGET_BACKBONES = ["hybrid", "transformer"] as const;

/** The backbone-budget study at cpu scale (true) or the paper's. */
export function backboneBudget(cpu: boolean): StudyDef {
  const base = backboneTrain(cpu);
  const arm = (id: Backbone, k: number): ArmDef => {
    if (k === 1)
      return shareArm(
        { ...backboneArm(id, cpu), id: `${id}-1x` },
        "backbones",
        backboneArm(id, cpu),
      );
    const train = { ...base, steps: base.steps! * k, evalEvery: base.evalEvery! * k };
    return { ...backboneArm(id, cpu, train), id: `${id}-${k}x` };
  };
  return {
    name: "backbone-budget",
    title:
      "Does the budget turn looping's sign for the hybrid and Transformer backbones? (2⊗1 vs 2⊗4)",
    notes: `The backbones study's hybrid and Transformer (SOTU, two layers, ${base.steps!.toLocaleString("en")} steps at 1×), 2⊗1 and 2⊗4 trained ${BUDGETS.map((k) => `${k}×`).join(", ")} as long, each budget with its own warmup-cosine schedule (the ablations study's budget arms for Mamba-2); the 1× arms are the backbones study's own sweeps. Claims on validation perplexity: lower is better.`,
    arms: BUDGET_BACKBONES.flatMap((id) => BUDGETS.map((k) => arm(id, k))),
    claims: BUDGET_BACKBONES.flatMap((id) =>
      BUDGETS.map((k) =>
        beats(`${id}, ${k}× steps: 2⊗4 beats 2⊗1`, `${id}-${k}x/2⊗4`, `${id}-${k}x/2⊗1`),
      ),
    ),
  };
}

/**
 * What explains the LM iso-parameter result: 2⊗1 against 2⊗4 on SOTU with the lm study's
 * settings, (a) trained 1×, 2× and 4× as long, and 2⊗4 with one recipe change each: (b) out_proj
 * initialised ÷√(N·R), (c) loop_norm, (d) the looped block at lr/R. At R = 1 each of (b)–(d) is
 * the baseline recipe, so those arms train only 2⊗4 and are compared with the 1× arm's 2⊗1 (the
 * same seed: the same initial stream and data).
 */
export function ablations(cpu: boolean): StudyDef {
  const train = lmTrain(cpu);
  const times = (k: number): ArmDef["train"] => ({
    ...train,
    steps: train.steps! * k,
    evalEvery: train.evalEvery! * k,
  });
  const arm = (id: string, loops: number[], extra: Partial<ArmDef>): ArmDef => ({
    id,
    protocol: "iso-param",
    task: lmTask(cpu),
    model: lmModel(cpu),
    base: 2,
    loops,
    train,
    paper: {},
    ...extra,
  });
  const recipes = [
    ["out-proj-depth", "(b) out_proj initialised ÷√(N·R)"],
    ["loop-norm", "(c) loop_norm"],
    ["block-lr", "(d) the looped block at lr/R"],
  ] as const;
  return {
    name: "ablations",
    title: "Ablations: why looping loses at equal parameters (LM, 2⊗1 vs 2⊗4)",
    notes:
      "SOTU with the lm study's model and training settings; validation perplexity. (a) 2⊗1 and 2⊗4 trained 1×, 2× and 4× the lm study's steps (each with its own warmup-cosine schedule); (b)–(d) 2⊗4 with one recipe change at 1×, against the 1× arm's 2⊗1 (at R = 1 the change is no change) and against the 1× arm's 2⊗4. Claims on perplexity: lower is better.",
    arms: [
      arm("budget-1x", [1, 4], {}),
      arm("budget-2x", [1, 4], { train: times(2) }),
      arm("budget-4x", [1, 4], { train: times(4) }),
      arm("out-proj-depth", [4], { model: { ...lmModel(cpu), outProjScale: "depth" } }),
      arm("loop-norm", [4], { model: { ...lmModel(cpu), loopNorm: true } }),
      arm("block-lr", [4], { train: { ...train, blockLr: "per-loop" } }),
    ],
    claims: [
      beats("(a) 1× steps: 2⊗4 beats 2⊗1", "budget-1x/2⊗4", "budget-1x/2⊗1"),
      beats("(a) 2× steps: 2⊗4 beats 2⊗1", "budget-2x/2⊗4", "budget-2x/2⊗1"),
      beats("(a) 4× steps: 2⊗4 beats 2⊗1", "budget-4x/2⊗4", "budget-4x/2⊗1"),
      ...recipes.flatMap(([id, what]) => [
        beats(`${what}: 2⊗4 beats 2⊗1`, `${id}/2⊗4`, "budget-1x/2⊗1"),
        beats(`${what} improves 2⊗4 over the baseline recipe`, `${id}/2⊗4`, "budget-1x/2⊗4"),
      ]),
    ],
  };
}
