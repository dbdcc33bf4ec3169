/*
 * The row- and element-wise slice of the op cases: the embedding's gather and scatter, rmsnorm,
 * the binary kernels (with a broadcast row), every unary kind, affine, split and concat along
 * both axes, softplusBias (with and without dt's clamp), the per-token cross-entropy, the masked
 * mean and the head's cross-entropy composed over them, at widths no multiple of a workgroup.
 */
import { crossEntropyOn, UNARY_KINDS } from "@loop/tensor";
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
      name: "binary add, sub, mul; reshape",
      op: "binary/reshape",
      inputs: [f("a", [r(5), 6]), f("b", [r(5), 6])],
      run: (ops, [a, b]) => [
        ops.reshape(ops.binary("add", a, b), [r(5) * 6]),
        ops.binary("sub", a, b),
        ops.binary("mul", a, b),
      ],
      tol: DEFAULT_TOL,
    },
    {
      name: "binary: a row broadcast over every position",
      op: "binary",
      inputs: [f("a", [2, r(5), 6]), f("b", [6])],
      run: (ops, [a, b]) => [
        ops.binary("add", a, b),
        ops.binary("sub", a, b),
        ops.binary("mul", a, b),
      ],
      tol: DEFAULT_TOL,
    },
    {
      name: `unary ${UNARY_KINDS.join(", ")}; affine`,
      op: "unary/affine",
      inputs: [f("x", [r(301)], { range: [-3, 3] })],
      run: (ops, [x]) => [...UNARY_KINDS.map((k) => ops.unary(k, x)), ops.affine(x, -1.5, 0.25)],
      tol: DEFAULT_TOL,
    },
    {
      name: "unary logsigmoid far in the tails",
      op: "unary",
      inputs: [f("x", [r(64)], { range: [-60, 60] })],
      run: (ops, [x]) => [ops.unary("logsigmoid", x), ops.unary("logsigmoid", ops.unary("neg", x))],
      tol: DEFAULT_TOL,
    },
    {
      name: "split and concat along the first and the last axis",
      op: "split/concat",
      inputs: [f("x", [r(5), 3, 7]), f("y", [2, 3, 7])],
      run: (ops, [x, y]) => {
        const rows = ops.split(x, [2, r(5) - 2], 0);
        const cols = ops.split(x, [4, 3], -1);
        return [...rows, ...cols, ops.concat([y, x], 0), ops.concat([cols[1]!, x], -1)];
      },
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
      name: "ceRows, maskedMean: a vocabulary no multiple of the workgroup, ignored targets",
      op: "ceRows/maskedMean",
      inputs: [
        f("logits", [2, r(6), 37]),
        f("x", [2, r(6)]),
        f("targets", [2, r(6)], { ints: 37, ignoreEvery: 5 }),
      ],
      run: (ops, [l, x, t]) => [ops.ceRows(l, t), ops.maskedMean(x, t)],
      tol: DEFAULT_TOL,
    },
    {
      name: "crossEntropy (composed): ignored targets",
      op: "crossEntropyOn",
      inputs: [f("logits", [2, r(6), 37]), f("targets", [2, r(6)], { ints: 37, ignoreEvery: 5 })],
      run: (ops, [l, t]) => [crossEntropyOn(ops, l, t)],
      tol: DEFAULT_TOL,
    },
  ];
}
