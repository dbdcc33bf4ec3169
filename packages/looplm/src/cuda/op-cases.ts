/**
 * The op conformance cases of a device backend against the CPU's ops: every op of `ModelOps` on
 * small random inputs with odd shapes (partial GEMM tiles, SSD chunks crossed, packed documents,
 * GQA, ignored targets), each reduced to a scalar (a cross-entropy over the output's last axis,
 * or the op's own scalar) so that one backward checks every input's gradient too. Written over
 * `BackendOps` once; `runCase` evaluates a case on any backend.
 */
import { type BackendOps, IGNORE_INDEX, Rng } from "@loop/tensor";

/** How an input's values are drawn. */
type Draw = "normal" | "positive" | "negative";

/** One float input: its shape and how it is drawn (default normal·0.5). */
interface Input {
  shape: number[];
  draw?: Draw;
}

/** One case (see the file comment). */
export interface OpCase {
  name: string;
  inputs: Input[];
  /** Index inputs: shape and values (token ids below `below`, or packed-document indices). */
  ints?: { shape: number[]; below?: number; documents?: number[]; targets?: boolean }[];
  /** Whether the op runs GEMMs (the cases that tf32 and bf16 change). */
  gemm?: boolean;
  /** The op; a scalar result is the objective itself. */
  run<T, I>(ops: BackendOps<T, I>, x: T[], i: I[]): T;
}

/** A case's values on one backend: the output, the scalar objective and each input's gradient. */
export interface CaseResult {
  out: Float32Array;
  loss: number;
  grads: (Float32Array | null)[];
}

const size = (s: readonly number[]) => s.reduce((a, b) => a * b, 1);

function draw(rng: Rng, n: number, how: Draw): Float32Array {
  const out = new Float32Array(n);
  for (let k = 0; k < n; k++) {
    const v = rng.normal() * 0.5;
    out[k] =
      how === "positive" ? 0.05 + Math.abs(v) * 0.4 : how === "negative" ? -0.2 - Math.abs(v) : v;
  }
  return out;
}

/** The inputs of `c` drawn from `seed` (the same for every backend). */
export function caseData(c: OpCase, seed = 7): { floats: Float32Array[]; ints: Int32Array[] } {
  const rng = new Rng(seed);
  const floats = c.inputs.map((x) => draw(rng, size(x.shape), x.draw ?? "normal"));
  const ints = (c.ints ?? []).map((x) => {
    const n = size(x.shape);
    if (x.documents) return Int32Array.from(x.documents);
    const below = x.below ?? 2;
    return Int32Array.from({ length: n }, (_v, k) =>
      x.targets && k % 5 === 3 ? IGNORE_INDEX : rng.int(below),
    );
  });
  return { floats, ints };
}

/** Evaluate `c` on `ops`: forward, the scalar, backward, every input's gradient. */
export async function runCase<T, I>(ops: BackendOps<T, I>, c: OpCase): Promise<CaseResult> {
  const { floats, ints } = caseData(c);
  const xs = floats.map((d, k) =>
    ops.upload(d, c.inputs[k]!.shape, { persistent: true, requiresGrad: true }),
  );
  const is = ints.map((d, k) => ops.uploadInt(d, c.ints![k]!.shape));
  try {
    const y = c.run(ops, xs, is);
    const shape = ops.shapeOf(y);
    let loss = y;
    if (size(shape) !== 1) {
      const last = shape[shape.length - 1]!;
      const rows = size(shape) / last;
      const rng = new Rng(3);
      const t = Int32Array.from({ length: rows }, (_v, k) =>
        k % 7 === 5 ? IGNORE_INDEX : rng.int(last),
      );
      loss = ops.crossEntropy(ops.reshape(y, [rows, last]), ops.uploadInt(t, [rows]));
    }
    const out = await ops.read(y);
    const l = (await ops.read(loss))[0]!;
    ops.backward(loss, 1);
    const grads = await Promise.all(xs.map((x) => ops.readGrad(x)));
    return { out: Float32Array.from(out), loss: l, grads };
  } finally {
    ops.zeroGrads(xs);
    for (const x of xs) ops.dispose(x);
    ops.releaseTransients();
  }
}

const B = 2;
/** Two documents per row: [0,0,0,1,1,…] and [0,0,0,0,0,1,…] shifted per row. */
const docs = (T: number) =>
  Array.from({ length: B * T }, (_v, k) => (k % T >= (k < T ? 3 : 5) ? 1 : 0));

/** The cases. */
export const OP_CASES: OpCase[] = [
  {
    name: "embedding",
    inputs: [{ shape: [7, 6] }],
    ints: [{ shape: [B, 5], below: 7 }],
    run: (ops, [w], [ids]) => ops.embedding(ids!, w!),
  },
  {
    name: "rmsnorm",
    inputs: [{ shape: [B, 5, 6] }, { shape: [6] }],
    run: (ops, [x, w]) => ops.rmsnorm(x!, w!, 1e-5),
  },
  {
    name: "add",
    inputs: [{ shape: [B, 5, 6] }, { shape: [B, 5, 6] }],
    run: (ops, [a, b]) => ops.add(a!, b!),
  },
  {
    name: "add (broadcast)",
    inputs: [{ shape: [B, 5, 6] }, { shape: [6] }],
    run: (ops, [a, b]) => ops.add(a!, b!),
  },
  {
    name: "linear",
    gemm: true,
    inputs: [{ shape: [B, 5, 6] }, { shape: [4, 6] }],
    run: (ops, [x, w]) => ops.linear(x!, w!),
  },
  {
    name: "linear (several tiles, partial edges)",
    gemm: true,
    inputs: [{ shape: [3, 70, 96] }, { shape: [130, 96] }],
    run: (ops, [x, w]) => ops.linear(x!, w!),
  },
  {
    name: "linearSplit",
    gemm: true,
    inputs: [{ shape: [B, 5, 6] }, { shape: [6, 6] }],
    run: (ops, [x, w]) => {
      const [a, b, c] = ops.linearSplit(x!, w!, [2, 2, 2]);
      return ops.add(ops.add(a!, ops.exp(b!)), c!);
    },
  },
  { name: "exp", inputs: [{ shape: [B, 5, 3] }], run: (ops, [x]) => ops.exp(x!) },
  { name: "neg", inputs: [{ shape: [B, 5, 3] }], run: (ops, [x]) => ops.neg(x!) },
  { name: "sigmoid", inputs: [{ shape: [B, 5, 3] }], run: (ops, [x]) => ops.sigmoid(x!) },
  { name: "negExp", inputs: [{ shape: [B, 5, 3] }], run: (ops, [x]) => ops.negExp(x!) },
  {
    name: "crossEntropy (ignored targets)",
    inputs: [{ shape: [B, 5, 9] }],
    ints: [{ shape: [B, 5], below: 9, targets: true }],
    run: (ops, [x], [t]) => ops.crossEntropy(x!, t!),
  },
  {
    name: "causalConv1dSiluSplit (initial state)",
    inputs: [{ shape: [B, 9, 6] }, { shape: [6, 1, 4] }, { shape: [6] }, { shape: [B, 6, 3] }],
    run: (ops, [x, w, b, init]) => {
      const [p, q] = ops.causalConv1dSiluSplit(x!, w!, b!, init!, [3, 3], null);
      return ops.swiglu(p!, q!);
    },
  },
  {
    name: "causalConv1dSiluSplit (packed documents)",
    inputs: [{ shape: [B, 9, 6] }, { shape: [6, 1, 4] }, { shape: [6] }],
    ints: [{ shape: [B * 9], documents: docs(9) }],
    run: (ops, [x, w, b], [s]) => ops.causalConv1dSiluSplit(x!, w!, b!, null, [6], s!)[0]!,
  },
  {
    name: "softplusBias",
    inputs: [{ shape: [B, 5, 3] }, { shape: [3] }],
    run: (ops, [r, b]) => ops.softplusBias(r!, b!, null),
  },
  {
    // (limits inside softplus's range on these draws: some entries clamped at each end)
    name: "softplusBias (time_step_limit [0.5, 1.2])",
    inputs: [{ shape: [B, 5, 3] }, { shape: [3] }],
    run: (ops, [r, b]) => ops.softplusBias(r!, b!, [0.5, 1.2]),
  },
  ...(["y", "state"] as const).flatMap((which) =>
    [false, true].map(
      (packed): OpCase => ({
        name: `ssdScanChunked → ${which} (T 40: two chunks, initial state, D${packed ? ", packed documents" : ""})`,
        inputs: [
          { shape: [B, 40, 4, 8] },
          { shape: [B, 40, 4], draw: "positive" },
          { shape: [4], draw: "negative" },
          { shape: [B, 40, 2, 4] },
          { shape: [B, 40, 2, 4] },
          { shape: [B, 4, 8, 4] },
          { shape: [4] },
        ],
        ints: packed ? [{ shape: [B * 40], documents: docs(40) }] : [],
        run: (ops, [x, dt, A, Bm, C, s0, D], [s]) => {
          const r = ops.ssdScanChunked(x!, dt!, A!, Bm!, C!, {
            initialState: s0!,
            D: D!,
            seqIdx: s ?? null,
          });
          return which === "y" ? r.y : r.state;
        },
      }),
    ),
  ),
  {
    name: "gatedRmsnorm (2 groups)",
    inputs: [{ shape: [B, 5, 8] }, { shape: [B, 5, 8] }, { shape: [8] }],
    run: (ops, [y, z, w]) => ops.gatedRmsnorm(y!, z!, w!, 2, 1e-5),
  },
  ...[false, true].map(
    (packed): OpCase => ({
      name: `projectedAttention (GQA 4/2, RoPE${packed ? ", packed documents" : ""})`,
      gemm: true,
      inputs: [{ shape: [B, 9, 16] }, { shape: [16, 16] }, { shape: [8, 16] }, { shape: [8, 16] }],
      ints: packed ? [{ shape: [B * 9], documents: docs(9) }] : [],
      run: (ops, [u, wq, wk, wv], [s]) =>
        ops.projectedAttention(u!, wq!, wk!, wv!, {
          nHeads: 4,
          nKvHeads: 2,
          rope: { theta: 10000, offset: 0 },
          seqIdx: s ?? null,
        }),
    }),
  ),
  {
    name: "swiglu",
    inputs: [{ shape: [B, 5, 6] }, { shape: [B, 5, 6] }],
    run: (ops, [g, u]) => ops.swiglu(g!, u!),
  },
  {
    name: "gateLogits",
    inputs: [
      { shape: [B, 5, 6] },
      { shape: [B, 5, 6] },
      { shape: [B, 5, 6] },
      { shape: [1, 6] },
      { shape: [1] },
    ],
    run: (ops, [a, b, c, w, bias]) => ops.gateLogits([a!, b!, c!], w!, bias!),
  },
  { name: "exitPdf", inputs: [{ shape: [3, B, 5] }], run: (ops, [a]) => ops.exitPdf(a!) },
  {
    name: "stage1Loss",
    inputs: [
      { shape: [3, B, 5] },
      { shape: [B, 5, 7] },
      { shape: [B, 5, 7] },
      { shape: [B, 5, 7] },
    ],
    ints: [{ shape: [B, 5], below: 7, targets: true }],
    run: (ops, [a, l0, l1, l2], [t]) => ops.stage1Loss(a!, [l0!, l1!, l2!], t!, { beta: 0.1 }),
  },
  {
    name: "stage2Loss (gate only)",
    inputs: [
      { shape: [B, 5, 6] },
      { shape: [B, 5, 6] },
      { shape: [1, 6] },
      { shape: [1] },
      { shape: [B, 5, 7] },
      { shape: [B, 5, 7] },
    ],
    ints: [{ shape: [B, 5], below: 7, targets: true }],
    run: (ops, [r0, r1, w, b, l0, l1], [t]) =>
      ops.stage2Loss({ logits: (rs) => ops.gateLogits(rs, w!, b!) }, [r0!, r1!], [l0!, l1!], t!, {
        k: 50,
        gamma: 0.005,
      }),
  },
];
