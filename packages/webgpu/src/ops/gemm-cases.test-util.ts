/**
 * Shared by the GEMM variant tests: one product on explicit layouts (offsets, leading
 * dimensions, batch strides) run through `gemm` on the device, and its float64 reference on the
 * CPU over the same stored values (optionally rounded first, e.g. to f16).
 */
import { Rng } from "@loop/tensor";
import type { GpuContext } from "../gpu-context.js";
import { emptyLike, releaseTransients, uploadTensor } from "../gpu-tensor.js";
import { type GemmCall, gemm, gemmPlan } from "./gemm.js";

/** Every (transA, transB) pair, transA outer: the order the GEMM tests name their cases in. */
export const TRANSPOSES = [
  [false, false],
  [false, true],
  [true, false],
  [true, true],
] as const;

export interface Layout {
  /** Element offset of the first entry. */
  off: number;
  /** Extra elements at the end of each stored row (ld = row length + pad). */
  pad: number;
}

export interface Product {
  M: number;
  N: number;
  K: number;
  transA: boolean;
  transB: boolean;
  batch: number;
  a: Layout;
  b: Layout;
}

/** Stored rows × columns of A and B. */
function stored(p: Product) {
  const a = p.transA ? [p.K, p.M] : [p.M, p.K];
  const b = p.transB ? [p.N, p.K] : [p.K, p.N];
  return { a: a as [number, number], b: b as [number, number] };
}

export interface Operands {
  A: Float32Array;
  B: Float32Array;
  lda: number;
  ldb: number;
  strideA: number;
  strideB: number;
}

/** Random operands in their layouts; the padding and offsets hold NaN (never read). */
export function operands(p: Product, seed: number): Operands {
  const s = stored(p);
  const rng = new Rng(seed);
  const fill = (rc: [number, number], lay: Layout) => {
    const ld = rc[1] + lay.pad;
    const stride = rc[0] * ld;
    const data = new Float32Array(lay.off + p.batch * stride).fill(Number.NaN);
    for (let b = 0; b < p.batch; b++)
      for (let r = 0; r < rc[0]; r++)
        for (let c = 0; c < rc[1]; c++)
          data[lay.off + b * stride + r * ld + c] = rng.uniformIn(-2, 2);
    return { data, ld, stride };
  };
  const a = fill(s.a, p.a);
  const b = fill(s.b, p.b);
  return { A: a.data, B: b.data, lda: a.ld, ldb: b.ld, strideA: a.stride, strideB: b.stride };
}

/** The product in float64 over `round`ed operand values: [batch, M, N]. */
export function reference(p: Product, o: Operands, round: (x: number) => number = (x) => x) {
  const out = new Float64Array(p.batch * p.M * p.N);
  for (let b = 0; b < p.batch; b++)
    for (let m = 0; m < p.M; m++)
      for (let n = 0; n < p.N; n++) {
        let s = 0;
        for (let k = 0; k < p.K; k++) {
          const ai = p.transA ? k * o.lda + m : m * o.lda + k;
          const bi = p.transB ? n * o.ldb + k : k * o.ldb + n;
          s +=
            round(o.A[p.a.off + b * o.strideA + ai]!) * round(o.B[p.b.off + b * o.strideB + bi]!);
        }
        out[(b * p.M + m) * p.N + n] = s;
      }
  return out;
}

/** Σ_k |a|·|b| per output: the scale of float32 rounding in each sum. */
export function magnitudes(p: Product, o: Operands): Float64Array {
  const abs = { ...o, A: o.A.map(Math.abs), B: o.B.map(Math.abs) };
  return reference(p, abs);
}

/** Run the product through `gemm` with `extra` call fields; the result and the plan used. */
export async function runOnDevice(
  ctx: GpuContext,
  p: Product,
  o: Operands,
  extra: Partial<GemmCall> = {},
) {
  const A = uploadTensor(ctx, o.A, [o.A.length]);
  const B = uploadTensor(ctx, o.B, [o.B.length]);
  const C = emptyLike(ctx, [p.batch * p.M * p.N]);
  const call: GemmCall = {
    transA: p.transA,
    transB: p.transB,
    M: p.M,
    N: p.N,
    K: p.K,
    batch: p.batch,
    a: { buf: A.buffer, off: p.a.off, ld: o.lda, stride: o.strideA },
    b: { buf: B.buffer, off: p.b.off, ld: o.ldb, stride: o.strideB },
    c: { buf: C.buffer, ld: p.N, stride: p.M * p.N },
    ...extra,
  };
  const plan = gemmPlan(ctx, call);
  gemm(ctx, call);
  const out = await C.read();
  releaseTransients(ctx);
  return { out, plan };
}

/** The worst |got − want| / (atol + rtol·mag) over the outputs (≤ 1 passes). */
export function worstRatio(
  got: Float32Array,
  want: Float64Array,
  mag: Float64Array,
  rtol: number,
): { ratio: number; at: number } {
  let ratio = 0;
  let at = -1;
  for (let i = 0; i < want.length; i++) {
    const r = Math.abs(got[i]! - want[i]!) / (1e-30 + rtol * mag[i]!);
    if (!(r <= ratio)) {
      ratio = r;
      at = i;
    }
  }
  return { ratio, at };
}
