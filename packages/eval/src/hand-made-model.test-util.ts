/**
 * The hand-made case shared by the accuracy and exit-rule tests, kept in one place because both
 * read their expected numbers off the same table: rows of T = 2 whose answer is class id + 1 at
 * position 1 (V = 5, R = 3). Step r puts logit 100 on the answer for rows id < r, else on the
 * wrong class (answer mod 4) + 1, so accuracy by step is 1/4, 2/4, 3/4. Readout column 0 (the
 * gate logit, and logit 0) is +10 from row id's step EXIT[id] on, −10 before, so at 0 < q < 1 row
 * id exits at EXIT[id]. Readout = logits, so state-change reads the logits.
 *   argmax by step: row 0: 1 1 1 · row 1: 3 2 2 · row 2: 4 4 3 · row 3: 1 1 1 (never right)
 */
import { IGNORE_INDEX } from "@loop/tensor";
import { tableModel } from "./helpers.test-util.js";

export const V = 5;
export const EXIT = [1, 3, 2, 3];

/** n rows whose ids run from offset, so batches can split the 4 rows without changing them. */
export function handMadeRows(n = 4, offset = 0) {
  const tokens = new Int32Array(n * 2);
  const targets = new Int32Array(n * 2).fill(IGNORE_INDEX);
  for (let b = 0; b < n; b++) {
    tokens[b * 2] = offset + b; // the row id, read back by the stand-in model
    tokens[b * 2 + 1] = 0;
    targets[b * 2 + 1] = offset + b + 1;
  }
  return { tokens, targets, shape: [n, 2] as [number, number] };
}

export const handMadeModel = tableModel(
  3,
  V,
  (r, tokens, B, T) => {
    const out = new Float32Array(B * T * V);
    for (let b = 0; b < B; b++) {
      const id = tokens[b * T]!;
      for (let t = 0; t < T; t++) {
        const o = (b * T + t) * V;
        const answer = id + 1;
        out[o + (id < r ? answer : (answer % 4) + 1)] = 100;
        // position 0 exits at step 1 (not scored, must not enter the statistics)
        out[o] = t === 0 || r >= EXIT[id]! ? 10 : -10;
      }
    }
    return out;
  },
  true,
);
