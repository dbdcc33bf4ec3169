/*
 * What a reproduction study is: arms (each one protocol sweep of the existing sweep machinery,
 * trained once per seed), the paper's number for each member, and the claims checked on the
 * seed-aggregated results.
 */
import type { ModelFlags } from "../options/model.js";
import type { TaskFlags, TaskName } from "../options/task.js";
import type { TrainFlags } from "../options/train.js";
import type { Protocol } from "../sweep-runner.js";

export const SCALES = ["cpu", "paper"] as const;
export type Scale = (typeof SCALES)[number];

/** One sweep of a study: a family of N⊗R models on one task. */
export interface ArmDef {
  /** Folder and reference name within the study, e.g. "iso-param". */
  id: string;
  protocol: Protocol;
  task: Partial<TaskFlags> & { task: TaskName };
  /** Model flags on top of the CLI defaults (layers/loops come from base and loops). */
  model: Partial<ModelFlags>;
  base: number;
  loops: number[];
  /** Training flags on top of the CLI defaults (the seed is set per seed). */
  train: Partial<TrainFlags>;
  /** The paper's number for a member, keyed by its label ("1⊗12"), as the paper prints it. */
  paper: Record<string, string>;
  /** A downstream multiple-choice evaluation of every member's final model (LM arms). */
  mc?: McDef;
  /** A last-word cloze on the corpus's held-out documents for every member (LM arms). */
  cloze?: ClozeDef;
  /** Mano arms: accuracy at every expression length ℓ = 1..L for every member. */
  perLength?: PerLengthDef;
  /**
   * The same sweep as arm `arm` of study `study` (equal settings, checked when the study is
   * built): it trains in, or is read from, that study's folders `<out>/<study>/<arm>/seed-<k>`,
   * so running both studies trains it once. It is always continued, never overwritten, by the
   * study that borrows it, and `--overwrite` of the borrowing study leaves it in place.
   */
  sharedWith?: { study: string; arm: string };
}

/** `evaluateManoByLength` of `@loop/eval` on every member's final model. */
export interface PerLengthDef {
  /** Fresh expressions per ℓ (from the "mano/eval-len" stream at its default seed). */
  count: number;
}

/** The last-word cloze of `@loop/eval` on the validation split of the arm's corpus. */
export interface ClozeDef {
  /** Choices per item (the right word and choices − 1 distractors): chance is 1/choices. */
  choices: number;
  /** Items scored (the first ones of the held-out documents). */
  limit: number;
}

/** A multiple-choice set in PIQA's files (items .jsonl, labels .lst), scored with the harness. */
export interface McDef {
  /** Its name in tables ("PIQA"). */
  name: string;
  items: string;
  labels: string;
  /** Score only the first `limit` items. */
  limit?: number;
}

/** A member of an arm: "arm/label", e.g. "iso-param/1⊗6". */
export type MemberRef = string;

export type ClaimDef =
  | {
      kind: "better";
      /** The paper's claim in words. */
      text: string;
      a: MemberRef;
      b: MemberRef;
      /**
       * The margin: the 95 % interval of the per-seed difference (a better than b: accuracy
       * a − b, perplexity b − a) must lie above it for "holds", below it for "contradicted"
       * (0: a beats b; −0.02: a stays within 2 points of b).
       */
      minGap: number;
      /** Judge the arm's metric (default) or its downstream multiple-choice accuracy. */
      on?: ClaimTarget;
    }
  | {
      kind: "widens";
      text: string;
      /**
       * Judged on the paired per-seed (wide[0] − wide[1]) − (narrow[0] − narrow[1]), better-
       * oriented as "better" is: the 95 % interval must lie above `minGap` for "holds". A gap
       * that grows from one setting (narrow) to another (wide).
       */
      wide: [MemberRef, MemberRef];
      narrow: [MemberRef, MemberRef];
      minGap: number;
    }
  | {
      kind: "below" | "above";
      text: string;
      member: MemberRef;
      /** The 95 % interval of the member's mean must lie below / above this value. */
      threshold: number;
      on?: ClaimTarget;
    };

/** The arm's metric, its multiple-choice accuracy (mc) or its last-word cloze accuracy. */
export type ClaimTarget = "metric" | "mc" | "cloze";

export interface StudyDef {
  name: string;
  title: string;
  /** How the settings were chosen (pilots, what did not learn): printed with the results. */
  notes: string;
  arms: ArmDef[];
  claims: ClaimDef[];
  /**
   * A depth sweep: each arm an iso-FLOPs family 1⊗1, 1⊗R, R⊗1 at its own R; plotted as the
   * metric against R for the looped, deep and shallow models.
   */
  depthChart?: boolean;
  /**
   * The arms of this study that other studies borrow (arm id → the borrowing studies' names),
   * filled in by `sweepStudy`: such an arm's folder may be held by a borrowing study's process,
   * and this study then waits for it as the borrower would. Not part of the study's settings.
   */
  lentTo?: Readonly<Record<string, readonly string[]>>;
}
