/*
 * The Transformer layer's slice of the op cases: the RoPE and attention kernels, projected
 * attention composed over them (GQA, documents, more keys than one tile; the CPU's fused one is
 * the reference) and the MLP's swiglu.
 */
import { projectedAttentionOn } from "@loop/attention";
import type { OpCase, Rows, Tolerance } from "./case-types.js";
import { docs, f } from "./inputs.js";
import { DEFAULT_TOL } from "./tolerances.js";

/**
 * Attention's gradients sum over every key and go through three projections; the inputs are
 * kept small (uniform in ±0.5) so that the softmax stays soft, as after a norm, where a peaked
 * one would amplify float32 rounding. Bound: the golden files' rule (docs/formats.md).
 */
const ATTENTION_TOL: Tolerance = { atol: 1e-4, rtol: 1e-4 };
const SMALL: [number, number] = [-0.5, 0.5];

/**
 * Projected attention (composed over the backend's kernels) of u [B, T, 16] with Hq heads of
 * `hd` over Hkv, and packed documents `seq` when given.
 */
function projected(
  [B, T]: [number, number],
  [Hq, Hkv, hd]: [number, number, number],
  seq: number[] | null,
): Omit<OpCase, "name"> {
  const w = (name: string, rows: number) => f(name, [rows, 16], { range: SMALL });
  return {
    op: "projectedAttention",
    inputs: [
      f("u", [B, T, 16], { range: SMALL }),
      w("wq", Hq * hd),
      w("wk", Hkv * hd),
      w("wv", Hkv * hd),
      ...(seq ? [f("seqIdx", [B * T], { intValues: seq })] : []),
    ],
    run: (ops, [u, wq, wk, wv, s]) => [
      projectedAttentionOn(ops, u, wq, wk, wv, { nHeads: Hq, nKvHeads: Hkv, seqIdx: s ?? null }),
    ],
    tol: ATTENTION_TOL,
  };
}

/** The attention and MLP cases at row count `r`. */
export function attentionMlpCases(r: Rows): OpCase[] {
  return [
    {
      ...projected([2, r(9)], [4, 2, 4], docs(2, r(9), [4])),
      name: "projectedAttention: GQA, RoPE, documents",
      precision: "any",
    },
    {
      ...projected([1, r(70)], [2, 2, 8], null),
      name: "projectedAttention: more keys than one tile",
    },
    {
      name: "rope, attention: GQA, an offset, documents",
      op: "rope/attention",
      inputs: [
        f("q", [2, r(9), 4, 4], { range: SMALL }),
        f("k", [2, r(9), 2, 4], { range: SMALL }),
        f("v", [2, r(9), 2, 4], { range: SMALL }),
        f("seqIdx", [2 * r(9)], { intValues: docs(2, r(9), [4]) }),
      ],
      run: (ops, [q, k, v, seq]) => {
        const [qr, kr] = ops.rope([q, k], { theta: 1000, offset: 3 });
        return [qr, kr, ops.attention(qr!, kr!, v, { seqIdx: seq })];
      },
      tol: ATTENTION_TOL,
    },
    {
      name: "swiglu",
      op: "swiglu",
      inputs: [f("gate", [r(7), 13]), f("up", [r(7), 13])],
      run: (ops, [g, u]) => [ops.swiglu(g, u)],
      tol: DEFAULT_TOL,
    },
  ];
}
