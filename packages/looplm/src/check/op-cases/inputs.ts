/*
 * Helpers that describe a case's inputs: a named input of a shape, and packed-document indices.
 */
import type { CaseInput } from "./case-types.js";

/** An input `name` of `shape` (floats N(0, 1) unless `more` says otherwise). */
export const f = (name: string, shape: number[], more: Partial<CaseInput> = {}): CaseInput => ({
  name,
  shape,
  ...more,
});

/** Packed documents over [B·T] positions: a new document at each of `starts` (per row). */
export function docs(B: number, T: number, starts: number[]): number[] {
  const out: number[] = [];
  for (let b = 0; b < B; b++) {
    let d = 0;
    for (let t = 0; t < T; t++) {
      if (starts.includes(t)) d++;
      out.push(b * 100 + d);
    }
  }
  return out;
}
