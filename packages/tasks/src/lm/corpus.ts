/*
 * Text corpora as lists of named documents, and a deterministic train/validation split:
 * with two or more documents, whole documents go to validation (a seeded shuffle picks
 * ⌈fraction·count⌉ of them, at least one, never all); a single document is cut at
 * ⌊(1 − fraction)·length⌋ code units (moved off a surrogate pair), its tail being validation.
 */
import { deriveSeed, Rng } from "@loop/tensor";

/** One text document of a corpus: its name and its text. */
export interface TextDocument {
  name: string;
  text: string;
}

/** A corpus split into training and validation documents. */
export interface CorpusSplit {
  train: TextDocument[];
  validation: TextDocument[];
}

/** How `splitCorpus` holds documents out: the validation share and the shuffle seed. */
export interface SplitOptions {
  /** Share held out for validation, in (0, 1) (default 0.05). */
  validationFraction?: number;
  /** Seed of the document shuffle (default 0). */
  seed?: number;
}

/** Split documents into training and validation, whole documents, by a seeded shuffle. */
export function splitCorpus(
  docs: readonly TextDocument[],
  options: SplitOptions = {},
): CorpusSplit {
  const fraction = options.validationFraction ?? 0.05;
  if (!(fraction > 0 && fraction < 1))
    throw new Error(`validationFraction must be in (0, 1), got ${fraction}`);
  if (docs.length === 0) throw new Error("corpus: no documents to split");
  if (docs.length === 1) {
    const d = docs[0]!;
    let cut = Math.floor((1 - fraction) * d.text.length);
    const c = d.text.charCodeAt(cut - 1);
    if (c >= 0xd800 && c <= 0xdbff) cut++; // keep a surrogate pair together
    return {
      train: [{ name: `${d.name}#train`, text: d.text.slice(0, cut) }],
      validation: [{ name: `${d.name}#validation`, text: d.text.slice(cut) }],
    };
  }
  const order = new Rng(deriveSeed(options.seed ?? 0, "corpus/split")).shuffle(
    docs.map((_, i) => i),
  );
  const nValid = Math.min(docs.length - 1, Math.max(1, Math.ceil(fraction * docs.length)));
  const valid = new Set(order.slice(0, nValid));
  return {
    train: docs.filter((_, i) => !valid.has(i)),
    validation: docs.filter((_, i) => valid.has(i)),
  };
}
