/*
 * The Mamba-2 mixer's slice of the op cases: the causal convolution (initial state, documents,
 * more rows than one column-sum block), the chunked SSD scan (T no multiple of the chunk,
 * several tiles per chunk, documents, prefix sums over several workgroups) and the gated
 * rmsnorm.
 */
import type { OpCase, Rows } from "./case-types.js";
import { docs, f } from "./inputs.js";
import { DEFAULT_TOL } from "./tolerances.js";

/** The Mamba-2 mixer's cases at row count `r`. */
export function ssmCases(r: Rows): OpCase[] {
  return [
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
  ];
}

/**
 * One chunked-scan case: B×T positions, H heads of width P, G groups of state width N, chunks
 * of `chunk`; an initial state when `s0`, a new document at each of `starts` in every row.
 */
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
