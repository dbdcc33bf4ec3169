/*
 * The exit gate's slice of the op cases: the gate's logits and exit distribution over the
 * readouts, and the two training stages' losses (ignored targets included), composed over the
 * backend's kernels (@loop/exit-gate) and held to the CPU's fused float64 ops.
 */
import { exitPdfOn, gateLogitsOn, stage1LossOn, stage2LossOn } from "@loop/exit-gate";
import type { OpCase, Rows } from "./case-types.js";
import { f } from "./inputs.js";
import { DEFAULT_TOL } from "./tolerances.js";

/** The exit gate's cases at row count `r`. */
export function exitGateCases(r: Rows): OpCase[] {
  return [
    {
      name: "gateLogits, exitPdf: three readouts",
      op: "gateLogits/exitPdf",
      inputs: [
        f("r1", [2, r(5), 8]),
        f("r2", [2, r(5), 8]),
        f("r3", [2, r(5), 8]),
        f("w", [1, 8]),
        f("b", [1]),
      ],
      run: (ops, [a, b, c, w, bias]) => {
        const logits = gateLogitsOn(ops, [a, b, c], w, bias);
        return [logits, exitPdfOn(ops, logits)];
      },
      tol: DEFAULT_TOL,
    },
    {
      name: "stage1Loss: three steps, ignored targets",
      op: "stage1Loss",
      inputs: [
        f("a", [3, 2, r(4)]),
        f("l1", [2, r(4), 11]),
        f("l2", [2, r(4), 11]),
        f("l3", [2, r(4), 11]),
        f("targets", [2, r(4)], { ints: 11, ignoreEvery: 5 }),
      ],
      run: (ops, [a, l1, l2, l3, t]) => [stage1LossOn(ops, a, [l1, l2, l3], t, { beta: 0.05 })],
      tol: { atol: 1e-5, rtol: 1e-4 },
    },
    {
      name: "stage2Loss: the gate from the readouts, per-step losses constant, ignored targets",
      op: "stage2Loss",
      inputs: [
        f("r1", [2, r(4), 8]),
        f("r2", [2, r(4), 8]),
        f("w", [1, 8]),
        f("b", [1]),
        f("l1", [2, r(4), 11]),
        f("l2", [2, r(4), 11]),
        f("targets", [2, r(4)], { ints: 11, ignoreEvery: 5 }),
      ],
      run: (ops, [r1, r2, w, b, l1, l2, t]) => {
        const gate = { logits: (rs: readonly unknown[]) => gateLogitsOn(ops, rs, w, b) };
        return [stage2LossOn(ops, gate, [r1, r2], [l1, l2], t, { k: 50, gamma: 0.005 })];
      },
      tol: { atol: 1e-5, rtol: 1e-4 },
    },
  ];
}
