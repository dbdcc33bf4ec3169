/*
 * The row- and element-wise slice of the op cases: the embedding's gather and scatter, rmsnorm,
 * add (with a broadcast row), the pointwise exp/neg/sigmoid/negExp, softplusBias (with and
 * without dt's clamp) and the head's crossEntropy, at widths no multiple of a workgroup.
 */
import type { OpCase, Rows } from "./case-types.js";
import { f } from "./inputs.js";
import { DEFAULT_TOL } from "./tolerances.js";

/** The row- and element-wise cases at row count `r`. */
export function rowwiseCases(r: Rows): OpCase[] {
  return [
    {
      name: "embedding: ids gathered, gradients scattered (repeats)",
      op: "embedding",
      inputs: [f("ids", [2, r(9)], { ints: 7 }), f("w", [7, 10])],
      run: (ops, [ids, w]) => [ops.embedding(ids, w)],
      tol: DEFAULT_TOL,
    },
    {
      name: "rmsnorm: a row width no multiple of the workgroup",
      op: "rmsnorm",
      inputs: [f("x", [3, r(7), 37]), f("w", [37])],
      run: (ops, [x, w]) => [ops.rmsnorm(x, w, 1e-5)],
      tol: DEFAULT_TOL,
    },
    {
      name: "add, reshape",
      op: "add",
      inputs: [f("a", [r(5), 6]), f("b", [r(5), 6])],
      run: (ops, [a, b]) => [ops.reshape(ops.add(a, b), [r(5) * 6])],
      tol: DEFAULT_TOL,
    },
    {
      name: "add: a row broadcast over every position",
      op: "add",
      inputs: [f("a", [2, r(5), 6]), f("b", [6])],
      run: (ops, [a, b]) => [ops.add(a, b)],
      tol: DEFAULT_TOL,
    },
    {
      name: "exp, neg, sigmoid, negExp",
      op: "exp/neg/sigmoid/negExp",
      inputs: [f("x", [r(301)], { range: [-3, 3] })],
      run: (ops, [x]) => [ops.exp(x), ops.neg(x), ops.sigmoid(x), ops.negExp(x)],
      tol: DEFAULT_TOL,
    },
    {
      name: "softplusBias: bias broadcast over rows",
      op: "softplusBias",
      inputs: [f("raw", [2, r(7), 5], { range: [-4, 4] }), f("bias", [5])],
      run: (ops, [raw, b]) => [ops.softplusBias(raw, b, null)],
      tol: DEFAULT_TOL,
    },
    {
      // (softplus of raw + bias spans about 0.02–5 here: entries clamped at both ends)
      name: "softplusBias: dt clamped to time_step_limit [0.3, 2]",
      op: "softplusBias",
      inputs: [f("raw", [2, r(7), 5], { range: [-4, 4] }), f("bias", [5])],
      run: (ops, [raw, b]) => [ops.softplusBias(raw, b, [0.3, 2])],
      tol: DEFAULT_TOL,
    },
    {
      name: "crossEntropy: a vocabulary no multiple of the workgroup, ignored targets",
      op: "crossEntropy",
      inputs: [f("logits", [2, r(6), 37]), f("targets", [2, r(6)], { ints: 37, ignoreEvery: 5 })],
      run: (ops, [l, t]) => [ops.crossEntropy(l, t)],
      tol: DEFAULT_TOL,
    },
  ];
}
