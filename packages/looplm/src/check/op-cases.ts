/*
 * The conformance cases of the backend contract: every op of `ModelOps` and the optimiser ops of
 * `TrainOps`, each run through the generic interface on a backend and on the CPU oracle with the
 * same seeded inputs (op-conformance.ts compares every output and every input gradient). The one
 * table `looplm check` and the test suite (op-cases.test.ts) both run, so a case added here is
 * checked in both. Shapes are chosen to reach the kernels' tails (sizes that are no multiple of
 * a tile, a chunk or a workgroup) and their multi-block paths (more rows than one block); a
 * `large` variant multiplies the row counts where `--size large` asks for it (a GPU node).
 *
 * Tolerance per element: |got − want| ≤ atol + rtol·|want|, the WebGPU suites' rule
 * (@loop/test-support-gpu's Tolerance: rtol 1e-4, atol rtol/20 by default).
 *
 * The cases live by slice of the contract in op-cases/ (gemm, row- and element-wise ops, the
 * Mamba-2 mixer, attention and MLP, the exit gate, the optimiser); this module assembles them in
 * that order, the order the report lists them in.
 */
import { attentionMlpCases } from "./op-cases/attention-mlp.js";
import type { OpCase } from "./op-cases/case-types.js";
import { exitGateCases } from "./op-cases/exit-gate.js";
import { gemmCases } from "./op-cases/gemm.js";
import { optimizerCases } from "./op-cases/optimizer.js";
import { rowwiseCases } from "./op-cases/rowwise.js";
import { ssmCases } from "./op-cases/ssm.js";

export type { AnyOps, CaseInput, OpCase, Tolerance } from "./op-cases/case-types.js";
export { DEFAULT_TOL, MIXED_TOL, REDUCED_PRECISION_TOL } from "./op-cases/tolerances.js";

/**
 * The cases at `scale` (1: the small shapes CI runs; larger multiplies the row counts). The
 * weights' gradients sum over the rows, `scale` times more terms, and two differently ordered
 * float32 sums drift apart with their length: the absolute floor grows by `scale` with them.
 */
export function opCases(scale = 1): OpCase[] {
  return casesAt(scale).map((c) => ({ ...c, tol: { atol: c.tol.atol * scale, rtol: c.tol.rtol } }));
}

function casesAt(scale: number): OpCase[] {
  const r = (n: number) => n * scale;
  return [
    ...gemmCases(r),
    ...rowwiseCases(r),
    ...ssmCases(r),
    ...attentionMlpCases(r),
    ...exitGateCases(r),
    ...optimizerCases(r),
  ];
}
