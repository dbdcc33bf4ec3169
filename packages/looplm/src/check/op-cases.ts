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
 */
import type { AdamWStepConstants, BackendOps } from "@loop/tensor";

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

/** The suites' default: rtol 1e-4, atol 5e-6. */
export const DEFAULT_TOL: Tolerance = { atol: 5e-6, rtol: 1e-4 };
/**
 * Under mixed precision each GEMM rounds its operands to f16 (relative error up to 2⁻¹¹ ≈ 4.9e-4
 * each): a sum of K terms of size O(1) is then off by up to ~K·1e-3 in the worst case and
 * ~√K·1e-3 typically, whatever its own size, so the bound needs an absolute floor: 2e-2 for the
 * sums here (K ≤ 96; measured worst 6e-3 on SwiftShader), and 1e-2 relative.
 */
export const MIXED_TOL: Tolerance = { atol: 2e-2, rtol: 1e-2 };

/**
 * The GEMM-bearing cases' (`precision: "any"`) tolerance at each reduced GEMM precision a backend
 * offers: webgpu's mixed (f16 operands) and cuda's tf32 and bf16 (tensor-core operands). tf32
 * keeps f16's 10 mantissa bits, so f16's bound; bf16 keeps 7 (a rounding error up to 2⁻⁸ ≈ 3.9e-3
 * per operand, 8× f16's): 8× the bound.
 */
export const REDUCED_PRECISION_TOL = {
  mixed: MIXED_TOL,
  tf32: MIXED_TOL,
  bf16: { atol: 1.6e-1, rtol: 8e-2 },
} as const satisfies Record<string, Tolerance>;

const f = (name: string, shape: number[], more: Partial<CaseInput> = {}): CaseInput => ({
  name,
  shape,
  ...more,
});

/** Packed documents over [B·T] positions: a new document at each of `starts` (per row). */
function docs(B: number, T: number, starts: number[]): number[] {
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

/**
 * Attention's gradients sum over every key and go through three projections; the inputs are
 * kept small (uniform in ±0.5) so that the softmax stays soft, as after a norm, where a peaked
 * one would amplify float32 rounding. Bound: the golden files' rule (docs/formats.md).
 */
const ATTENTION_TOL: Tolerance = { atol: 1e-4, rtol: 1e-4 };
const SMALL: [number, number] = [-0.5, 0.5];

/** The fixed AdamW constants of the optimiser case (step 3, lr 1e-2, weight decay 0.1). */
const ADAMW: AdamWStepConstants = {
  decay: 1 - 1e-2 * 0.1,
  stepSize: 1e-2 / (1 - 0.9 ** 3),
  beta1: 0.9,
  beta2: 0.999,
  eps: 1e-8,
  sc2: 1 / Math.sqrt(1 - 0.999 ** 3),
};

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
      run: (ops, [x, w]) => ops.linearSplit(x, w, [9, 4, 20]),
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
    {
      name: "causalConv1dSiluSplit: initial state, documents, three pieces",
      op: "causalConv1dSiluSplit",
      inputs: [
        f("x", [2, r(7), 10]),
        f("w", [10, 1, 4]),
        f("b", [10]),
        f("init", [2, 10, 3]),
        f("seqIdx", [2 * r(7)], { intValues: docs(2, r(7), [2, 5]) }),
      ],
      run: (ops, [x, w, b, init, seq]) => ops.causalConv1dSiluSplit(x, w, b, init, [4, 3, 3], seq),
      tol: DEFAULT_TOL,
    },
    {
      name: "causalConv1dSiluSplit: more rows than one column-sum block",
      op: "causalConv1dSiluSplit",
      inputs: [f("x", [2, r(150), 10]), f("w", [10, 1, 4]), f("b", [10])],
      run: (ops, [x, w, b]) => ops.causalConv1dSiluSplit(x, w, b, null, [4, 3, 3], null),
      tol: DEFAULT_TOL,
    },
    ssd("T no multiple of the chunk, two heads per group", 2, r(10), 4, 3, 2, 5, 4, true, []),
    ssd(
      "chunks of several 16-row tiles, a document inside a chunk",
      1,
      r(45),
      2,
      18,
      1,
      17,
      20,
      true,
      [7, 33],
    ),
    ssd("the prefix sums over several workgroups", 2, r(100), 4, 2, 2, 3, 3, false, [50]),
    {
      name: "gatedRmsnorm: two groups",
      op: "gatedRmsnorm",
      inputs: [f("y", [2, r(5), 12]), f("z", [2, r(5), 12]), f("w", [12])],
      run: (ops, [y, z, w]) => [ops.gatedRmsnorm(y, z, w, 2, 1e-5)],
      tol: DEFAULT_TOL,
    },
    {
      name: "projectedAttention: GQA, RoPE, documents",
      op: "projectedAttention",
      inputs: [
        f("u", [2, r(9), 16], { range: SMALL }),
        f("wq", [16, 16], { range: SMALL }),
        f("wk", [8, 16], { range: SMALL }),
        f("wv", [8, 16], { range: SMALL }),
        f("seqIdx", [2 * r(9)], { intValues: docs(2, r(9), [4]) }),
      ],
      run: (ops, [u, wq, wk, wv, seq]) => [
        ops.projectedAttention(u, wq, wk, wv, { nHeads: 4, nKvHeads: 2, seqIdx: seq }),
      ],
      tol: ATTENTION_TOL,
      precision: "any",
    },
    {
      name: "projectedAttention: more keys than one tile",
      op: "projectedAttention",
      inputs: [
        f("u", [1, r(70), 16], { range: SMALL }),
        f("wq", [16, 16], { range: SMALL }),
        f("wk", [16, 16], { range: SMALL }),
        f("wv", [16, 16], { range: SMALL }),
      ],
      run: (ops, [u, wq, wk, wv]) => [
        ops.projectedAttention(u, wq, wk, wv, { nHeads: 2, nKvHeads: 2 }),
      ],
      tol: ATTENTION_TOL,
    },
    {
      name: "swiglu",
      op: "swiglu",
      inputs: [f("gate", [r(7), 13]), f("up", [r(7), 13])],
      run: (ops, [g, u]) => [ops.swiglu(g, u)],
      tol: DEFAULT_TOL,
    },
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
        const logits = ops.gateLogits([a, b, c], w, bias);
        return [logits, ops.exitPdf(logits)];
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
      run: (ops, [a, l1, l2, l3, t]) => [ops.stage1Loss(a, [l1, l2, l3], t, { beta: 0.05 })],
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
        const gate = { logits: (rs: readonly unknown[]) => ops.gateLogits(rs, w, b) };
        return [ops.stage2Loss(gate, [r1, r2], [l1, l2], t, { k: 50, gamma: 0.005 })];
      },
      tol: { atol: 1e-5, rtol: 1e-4 },
    },
    {
      name: "gradNorm, clipGrads, adamw, scalars, copyScalar: one optimiser step",
      op: "TrainOps",
      inputs: [f("p", [r(1000) + 7]), f("q", [13])],
      run: (ops, [p, q]) => {
        // gradients from a backward (the only way a generic caller gives a tensor one)
        const n = ops.shapeOf(p)[0]!;
        const loss = ops.add(dot(ops, p, n, 0.5), dot(ops, q, 13, -2));
        ops.backward(loss, 1);
        const norm = ops.gradNorm([p, q]);
        ops.clipGrads([p, q], norm, 1);
        const m = ops.zeros([n]);
        const v = ops.zeros([n]);
        ops.adamw(p, m, v, ADAMW);
        const slots = ops.scalars(2);
        ops.copyScalar(norm, slots, 1);
        return [norm, p, m, v, slots];
      },
      tol: { atol: 2e-6, rtol: 2e-5 },
      backward: false,
    },
  ];
}

/** The one-element Σ x·c of a flat [n] tensor, through the contract's ops (a linear). */
function dot(ops: AnyOps, x: unknown, n: number, c: number): unknown {
  const w = ops.upload(new Float32Array(n).fill(c), [1, n]);
  return ops.reshape(ops.linear(ops.reshape(x, [1, n]), w), [1]);
}

function ssd(
  what: string,
  B: number,
  T: number,
  H: number,
  P: number,
  G: number,
  N: number,
  chunk: number,
  s0: boolean,
  starts: number[],
): OpCase {
  const inputs = [
    f("x", [B, T, H, P]),
    f("dt", [B, T, H], { range: [0.01, 0.5] }),
    f("A", [H], { range: [-1.5, -0.2] }),
    f("B", [B, T, G, N]),
    f("C", [B, T, G, N]),
    f("D", [H]),
    ...(s0 ? [f("state0", [B, H, P, N])] : []),
    ...(starts.length > 0 ? [f("seqIdx", [B * T], { intValues: docs(B, T, starts) })] : []),
  ];
  return {
    name: `ssdScanChunked: ${what} (B${B} T${T} H${H} P${P} G${G} N${N} chunk ${chunk})`,
    op: "ssdScanChunked",
    inputs,
    run: (ops, xs) => {
      const [x, dt, A, Bm, C, D] = xs;
      const initialState = s0 ? xs[6] : null;
      const seqIdx = starts.length > 0 ? xs[xs.length - 1] : null;
      const out = ops.ssdScanChunked(x, dt, A, Bm, C, {
        chunkSize: chunk,
        D,
        initialState,
        seqIdx,
      });
      return [out.y, out.state];
    },
    tol: DEFAULT_TOL,
  };
}
