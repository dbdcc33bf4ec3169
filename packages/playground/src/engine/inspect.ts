/**
 * One input through every loop step: the predicted symbol and its probability at each position
 * and step, the targets the task defines there, and a gated model's exit distribution.
 */
import { stepOutputs } from "@loop/eval";
import type { LoopedModel } from "@loop/looped";
import {
  argmaxLogits,
  evaluatePrefix,
  ManoTask,
  PHopTask,
  pHopPositionsAll,
  type Task,
} from "@loop/tasks";
import { intTensor } from "@loop/tensor";
import type { InspectResult, StepView } from "../protocol.js";

/** Longest input the page runs (a few times the training length is plenty to explore). */
export const MAX_INPUT = 512;

/**
 * Symbols of a typed input. p-hop letters may run together ("abcab") or be separated by
 * spaces; Mano tokens are separated by spaces ("<bos> <len_2> + 3 * 4 5 <ans>").
 */
export function parseInput(task: Task, text: string): string[] {
  const trimmed = text.trim();
  if (trimmed === "") throw new Error("the input is empty");
  const singleLetters = task.vocab.symbols.every((s) => s.length === 1);
  const symbols = /\s/.test(trimmed) || !singleLetters ? trimmed.split(/\s+/) : [...trimmed];
  const unknown = symbols.filter((s) => !task.vocab.has(s));
  if (unknown.length > 0) {
    const shown = task.vocab.symbols.slice(0, 40).join(" ");
    throw new Error(
      `unknown symbol${unknown.length > 1 ? "s" : ""} ${[...new Set(unknown)].map((s) => `"${s}"`).join(", ")}; the vocabulary is: ${shown}`,
    );
  }
  if (symbols.length > MAX_INPUT) {
    throw new Error(`the input has ${symbols.length} symbols; the page runs at most ${MAX_INPUT}`);
  }
  return symbols;
}

/** A fresh held-out example of the task (its evaluation distribution) for `seed`. */
export function sampleInput(task: Task, seed: number): string[] {
  const batch = task.evalSet({ count: 1, batchSize: 1, seed })[0]!;
  return task.vocab.decode(batch.tokens);
}

/** What the task says belongs at each position ("" where nothing is defined). */
export function targetsOf(task: Task, symbols: readonly string[]): string[] {
  const out = symbols.map(() => "");
  if (task instanceof PHopTask) {
    const ids = task.vocab.encode(symbols);
    const pos = pHopPositionsAll(ids, task.hops, task.alphabet);
    pos.forEach((p, i) => {
      if (p > 0) out[i] = symbols[p - 1]!;
    });
  } else if (task instanceof ManoTask) {
    const ans = symbols.indexOf("<ans>");
    if (ans >= 2 && symbols[0] === "<bos>") {
      try {
        out[ans] = String(evaluatePrefix(symbols.slice(2, ans)));
      } catch {
        // not a well-formed expression: no target to show
      }
    }
  }
  return out;
}

export function inspect(model: LoopedModel, task: Task, symbols: readonly string[]): InspectResult {
  const T = symbols.length;
  const V = model.config.vocab_size;
  const out = stepOutputs(model, intTensor(task.vocab.encode(symbols), [1, T]), true);
  const steps: StepView[] = out.logits.map((l) => {
    // the evaluators' argmax, so the view shows exactly what accuracy counts
    const predicted = Array.from(argmaxLogits(l.data, V));
    const confidence = predicted.map((best, t) => {
      const row = l.data.subarray(t * V, (t + 1) * V);
      let z = 0;
      for (let v = 0; v < V; v++) z += Math.exp(row[v]! - row[best]!);
      return 1 / z;
    });
    return { predicted, confidence };
  });
  const R = model.config.n_loops;
  const exitPdf =
    out.pdf === null
      ? null
      : Array.from({ length: R }, (_v, r) =>
          Array.from(out.pdf!.data.subarray(r * T, (r + 1) * T)),
        );
  const vocab = Array.from({ length: V }, (_v, i) =>
    i < task.vocabSize ? task.vocab.symbol(i) : `#${i}`,
  );
  return { symbols: [...symbols], targets: targetsOf(task, symbols), vocab, steps, exitPdf };
}
