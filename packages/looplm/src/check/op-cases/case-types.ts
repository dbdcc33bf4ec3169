/*
 * The shape of an op case: its inputs (seeded, uploaded in order), the op applied through the
 * backend contract's generic ops, and the tolerance its outputs and input gradients are held to.
 */
import type { BackendOps } from "@loop/tensor";

/** The ops of a backend, with its tensor types erased (the cases run on any backend). */
export type AnyOps = BackendOps<unknown, unknown>;

/** One input of a case: floats N(0,1) (or uniform in `range`), or integer ids in [0, `ints`). */
export interface CaseInput {
  name: string;
  shape: number[];
  /** Integer ids uniform in [0, ints) (no gradient). */
  ints?: number;
  /** Explicit integer values (document indices). */
  intValues?: number[];
  /** With `ints`: every `ignoreEvery`-th id is IGNORE_INDEX (targets a loss skips). */
  ignoreEvery?: number;
  /** Uniform in [lo, hi) instead of N(0, 1). */
  range?: [number, number];
  /** Compare this input's gradient (default true for floats). */
  grad?: boolean;
}

/** Per-element tolerance: |got − want| ≤ atol + rtol·|want|. */
export interface Tolerance {
  atol: number;
  rtol: number;
}

/** One case: inputs, the op applied through the generic ops, and its tolerance. */
export interface OpCase {
  /** "op: what the shape covers". */
  name: string;
  /** The contract's op (or ops) the case checks. */
  op: string;
  inputs: CaseInput[];
  /** The outputs from the inputs (uploaded in order); each is compared, then seeded for the backward. */
  run(ops: AnyOps, xs: unknown[]): unknown[];
  tol: Tolerance;
  /** Compare input gradients too (default true). */
  backward?: boolean;
  /** Only where the precision is fp32 (a case whose op has no f16 path is the same in both). */
  precision?: "fp32" | "mixed" | "any";
}

/** The row counts of a slice's cases at the table's scale: `r(n)` is n rows times the scale. */
export type Rows = (n: number) => number;
