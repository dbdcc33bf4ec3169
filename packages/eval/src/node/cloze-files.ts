/* The last-word cloze of a corpus's held-out documents (the validation split an LM task uses). */
import { loadCorpusSplit } from "@loop/tasks/node";
import { type ClozeOptions, lastWordClozeItems } from "../cloze/last-word-cloze.js";
import type { McItem } from "../multiple-choice/mc-items.js";

/**
 * Options of the corpus cloze: the cloze options plus the held-out split of the LM task it reads.
 */
export interface CorpusClozeOptions extends ClozeOptions {
  /** The split of the LM task (defaults as there: 0.05 held out, split seed 0). */
  validationFraction?: number;
  splitSeed?: number;
}

/** Cloze items from the validation documents of `corpus` (a path or "sotu"). */
export async function corpusClozeItems(
  corpus: string,
  opts: CorpusClozeOptions = {},
): Promise<McItem[]> {
  const split = await loadCorpusSplit({
    corpus,
    validationFraction: opts.validationFraction,
    splitSeed: opts.splitSeed,
  });
  return lastWordClozeItems(
    split.validation.map((d) => d.text),
    opts,
  );
}
