/*
 * The language-modelling studies' shared settings (model, corpus, training, downstream sets) and
 * the `lm` study: iso-parameter and iso-FLOPs on SOTU with downstream scores, iso-parameter on
 * TinyShakespeare.
 */
import { beats } from "./study-claims.js";
import type { ArmDef, StudyDef } from "./study-types.js";

/** The LM studies' Mamba-2 settings at cpu scale (true) or the paper's. */
export function lmModel(cpu: boolean) {
  return cpu
    ? { dModel: 64, dState: 16, headdim: 16, chunk: 64 }
    : { dModel: 256, dState: 64, headdim: 64, chunk: 64 };
}

/** The repository's test data (run `looplm reproduce` from the repository root). */
const TINY_SHAKESPEARE = "testdata/data/tinyshakespeare.txt";
const PIQA = {
  name: "PIQA",
  items: "testdata/data/piqa-valid.jsonl",
  labels: "testdata/data/piqa-valid-labels.lst",
};
/** The last-word cloze: 4 choices (chance 25 %), the first 500 items of the held-out speeches. */
const CLOZE = { choices: 4, limit: 500 };
const CLOZE_CHANCE = 1 / CLOZE.choices;

/** The LM task on `corpus` with the scale's vocabulary and window. */
export function lmTask(cpu: boolean, corpus = "sotu"): ArmDef["task"] {
  return { task: "lm", corpus, vocab: cpu ? 1024 : 4096, seqLen: cpu ? 128 : 256 };
}

/** The LM studies' training at cpu scale (true) or the paper's. */
export function lmTrain(cpu: boolean): ArmDef["train"] {
  return cpu
    ? { steps: 1500, batch: 16, lr: 3e-3, warmup: 50, evalEvery: 500, evalCount: 128 }
    : { steps: 5000, batch: 16, lr: 1e-3, warmup: 200, evalEvery: 500, evalCount: 64 };
}

/** The lm study at cpu scale (true) or the paper's. */
export function lm(cpu: boolean): StudyDef {
  return {
    name: "lm",
    title:
      "Language modelling: iso-parameter and iso-FLOPs (SOTU), iso-parameter (TinyShakespeare)",
    notes:
      "Validation perplexity (per loop step) on held-out text. SOTU: windows that pack several speeches reset the SSM state at each speech's start; the family 2⊗1, 2⊗2, 2⊗4 (iso-parameter) with 4⊗1 and 8⊗1 (iso-FLOPs). Every final SOTU model is scored downstream on a last-word cloze of the held-out speeches (the LM task's validation split: each sentence's last word against 3 distractors drawn from other sentences' last words, 500 items, lm-evaluation-harness log-likelihood protocol; chance 25 %), which judges the downstream claim, and on PIQA (validation, 1,838 items; chance 50 %), reported but not judged: models this small score at chance on it. TinyShakespeare (the repository's test data): 2⊗1 vs 2⊗4.",
    arms: [
      {
        id: "sotu",
        protocol: "iso-flops",
        task: lmTask(cpu),
        model: lmModel(cpu),
        base: 2,
        loops: [1, 2, 4],
        train: lmTrain(cpu),
        paper: {
          "2⊗1": "highest ppl of 2⊗R",
          "2⊗4": "lowest ppl of 2⊗R; competitive downstream",
          "8⊗1": "lower ppl than 2⊗4",
        },
        mc: PIQA,
        cloze: CLOZE,
      },
      {
        id: "shakespeare",
        protocol: "iso-param",
        task: lmTask(cpu, TINY_SHAKESPEARE),
        model: lmModel(cpu),
        base: 2,
        loops: [1, 4],
        train: lmTrain(cpu),
        paper: { "2⊗4": "lower ppl than 2⊗1" },
      },
    ],
    claims: [
      beats(
        "iso-parameter: more loops lower validation perplexity (SOTU, 2⊗4 vs 2⊗1)",
        "sotu/2⊗4",
        "sotu/2⊗1",
      ),
      beats("iso-parameter: 2⊗2 already beats 2⊗1 (SOTU)", "sotu/2⊗2", "sotu/2⊗1"),
      beats(
        "iso-parameter on a second corpus (TinyShakespeare, 2⊗4 vs 2⊗1)",
        "shakespeare/2⊗4",
        "shakespeare/2⊗1",
      ),
      beats(
        "iso-FLOPs: the deeper non-looped 8⊗1 keeps a perplexity edge over 2⊗4",
        "sotu/8⊗1",
        "sotu/2⊗4",
      ),
      {
        kind: "above",
        text: "downstream: the looped 2⊗4 scores above chance (25 %) on the last-word cloze",
        member: "sotu/2⊗4",
        threshold: CLOZE_CHANCE,
        on: "cloze",
      },
      beats(
        "downstream: the looped 2⊗4 stays competitive, within 2 points of 8⊗1 on the cloze",
        "sotu/2⊗4",
        "sotu/8⊗1",
        -0.02,
        "cloze",
      ),
      beats(
        "downstream: the looped 2⊗4 stays within 2 points of 2⊗1 on the cloze (iso-parameter)",
        "sotu/2⊗4",
        "sotu/2⊗1",
        -0.02,
        "cloze",
      ),
    ],
  };
}
