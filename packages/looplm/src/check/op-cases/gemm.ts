/*
 * The GEMM slice of the op cases: `linear` (x·wᵀ) with tails in every dimension, several tiles,
 * one row and a batch axis, linearSplit (composed, or the fused one a backend registers) and
 * `linears`. Each runs at every GEMM precision a backend offers (`precision: "any"`).
 */
import { linearSplitOn } from "@loop/tensor";
import type { OpCase, Rows } from "./case-types.js";
import { f } from "./inputs.js";
import { DEFAULT_TOL } from "./tolerances.js";

/** The GEMM cases at row count `r`. */
export function gemmCases(r: Rows): OpCase[] {
  const gemm = (M: number, K: number, N: number, what: string): OpCase => ({
    name: `linear ${M}×${K}·${N}ᵀ: ${what}`,
    op: "linear",
    inputs: [f("x", [M, K]), f("w", [N, K])],
    run: (ops, [x, w]) => [ops.linear(x, w)],
    tol: DEFAULT_TOL,
    precision: "any",
  });
  return [
    gemm(5, 7, 3, "tails in every dimension"),
    gemm(r(130), 96, 70, "several tiles, a partial last one"),
    gemm(1, 64, 33, "one row (decoding)"),
    {
      name: "linear [2, 9, 40]·[130, 40]ᵀ: a batch axis, columns over several tiles",
      op: "linear",
      inputs: [f("x", [2, r(9), 40]), f("w", [130, 40])],
      run: (ops, [x, w]) => [ops.linear(x, w)],
      tol: DEFAULT_TOL,
      precision: "any",
    },
    {
      name: "linearSplit: three pieces of 9, 4, 20",
      op: "linearSplit",
      inputs: [f("x", [2, r(9), 12]), f("w", [33, 12])],
      run: (ops, [x, w]) => linearSplitOn(ops, x, w, [9, 4, 20]),
      tol: DEFAULT_TOL,
      precision: "any",
    },
    {
      name: "linears: one input, two weights",
      op: "linears",
      inputs: [f("x", [r(11), 16]), f("w1", [8, 16]), f("w2", [5, 16])],
      run: (ops, [x, a, b]) =>
        ops.linears ? ops.linears(x, [a, b]) : [ops.linear(x, a), ops.linear(x, b)],
      tol: DEFAULT_TOL,
      precision: "any",
    },
  ];
}
