/*
 * Enqueue one (batched) GEMM on device buffers — the non-differentiable primitive under matmul,
 * linear and linearSplit and their gradients. Shapes and layouts as in kernels/gemm.ts.
 */
import type { GpuContext } from "../gpu-context.js";
import type { GpuTensor } from "../gpu-tensor.js";
import { grid, groups } from "../kernel-def.js";
import { F16_CAST_GROUP, f16CastKernel } from "../kernels/f16-cast.js";
import {
  GEMM_TILE,
  GEMM_TILE_LARGE,
  type GemmLoad,
  type GemmTile,
  gemmKernel,
  SPLITK_GROUP,
  splitKSumKernel,
  vec4Ok,
} from "../kernels/gemm.js";
import { type F16Storage, gpuPrecision } from "../precision.js";
import { placeholder } from "./optional-inputs.js";

/** A matrix operand: a buffer, an element offset, a leading dimension and a batch stride. */
export interface GemmOperand {
  buf: GPUBuffer;
  off?: number;
  ld: number;
  /** Elements between batch entries (0: the same matrix for every entry). */
  stride?: number;
  /** Already rounded to f16 (ops/f16-input.ts): read as it is under mixed precision, not cast. */
  f16?: boolean;
}

/** One GEMM call on the GPU: transposes, sizes, operands, output and batch. */
export interface GemmCall {
  transA: boolean;
  transB: boolean;
  M: number;
  N: number;
  K: number;
  a: GemmOperand;
  b: GemmOperand;
  c: GemmOperand;
  /** Batch entries (workgroup z), default 1. */
  batch?: number;
  /** 1 adds the product into C; 0 (default) overwrites C. */
  beta?: 0 | 1;
  /** A [N] vector added to every row of C. */
  bias?: GPUBuffer;
  /** The tile (default: `gemmTileFor` the shape). */
  tile?: GemmTile;
  /** false: scalar loads even where the layout allows vec4 (tests compare the two). */
  vec4?: boolean;
  /**
   * Operand precision (default: the context's, see precision.ts): "f16" rounds A and B to f16
   * storage first (one extra dispatch), "f32" reads them as they are.
   */
  operands?: "f32" | { f16: F16Storage };
  /** Batch entries per dispatch (default and at most 65535, WebGPU's limit along z). */
  zLimit?: number;
  /** K chunks (default: chosen by `splitKFor`; 1 turns split-K off). */
  splitK?: number;
  /**
   * The tensor whose buffer C is: where split-K runs without a bias on its whole buffer, the
   * partials stay in it as pending sums (`partialsTarget`); a value it still holds as partials
   * is summed before C is written otherwise. C may then be its `storage` (not summed yet).
   */
  sumInto?: GpuTensor;
}

/** Workgroups a GPU wants busy at once (an H200 has 132 SMs; more groups hide latency). */
const BUSY_GROUPS = 256;
/** The smallest K range worth a chunk of its own. */
const MIN_CHUNK = 256;

/**
 * How many K chunks a single product splits into: 1 unless its tile grid leaves the GPU idle and
 * K is long enough that each chunk still has MIN_CHUNK of it.
 */
export function splitKFor(M: number, N: number, K: number, tile: GemmTile = GEMM_TILE): number {
  const tiles = groups(M, tile.bm) * groups(N, tile.bn);
  if (tiles >= BUSY_GROUPS / 2) return 1;
  return Math.max(1, Math.min(Math.ceil(BUSY_GROUPS / tiles), Math.floor(K / MIN_CHUNK), 64));
}

/**
 * The tile for a product: the 128×128 one (GEMM_TILE_LARGE) when M and N are both at least 128
 * and its grid alone, batch included, still has BUSY_GROUPS/2 workgroups (so neither the GPU
 * idles nor split-K would start); else 64×64 (GEMM_TILE). Each output's sum runs over k in the
 * same order with either tile, so the pick never changes a number.
 */
export function gemmTileFor(M: number, N: number, batch = 1): GemmTile {
  const L = GEMM_TILE_LARGE;
  if (M < L.bm || N < L.bn) return GEMM_TILE;
  return groups(M, L.bm) * groups(N, L.bn) * batch >= BUSY_GROUPS / 2 ? L : GEMM_TILE;
}

/** Elements an operand spans from its offset: `rows` rows of `cols` at stride ld, `batch` times. */
function extent(o: GemmOperand, rows: number, cols: number, batch: number): number {
  return (batch - 1) * (o.stride ?? 0) + (rows - 1) * o.ld + cols;
}

/**
 * Round spans of f32 buffers to f16 (two per u32 word: also the bytes of an `array<f16>`, so
 * both storages read them) in one dispatch; at most two spans. Returns the new buffers.
 */
export function castToF16(
  ctx: GpuContext,
  spans: { buf: GPUBuffer; off: number; n: number }[],
): GPUBuffer[] {
  const words = spans.map((s) => Math.ceil(s.n / 2));
  const outs = words.map((w) => ctx.allocBytes(w * 4));
  const [a, b] = spans;
  // a lone span leaves B's slot empty (a scratch word to write nothing into)
  const spare = b ? null : ctx.allocBytes(4);
  ctx.run(
    f16CastKernel,
    { srcA: a!.buf, srcB: (b ?? a)!.buf, outA: outs[0]!, outB: outs[1] ?? spare! },
    {
      offA: a!.off,
      nA: a!.n,
      offB: b?.off ?? 0,
      nB: b?.n ?? 0,
      wordsA: words[0]!,
      wordsB: words[1] ?? 0,
    },
    grid(words[0]! + (words[1] ?? 0), F16_CAST_GROUP),
  );
  if (spare) ctx.release(spare);
  return outs;
}

/**
 * Round the spans of A and B not rounded yet to f16 buffers (one dispatch): the GEMM then reads
 * them from offset 0 with the same leading dimensions and strides. Returns the operands, the
 * cast ones new (the caller releases them after the product).
 */
function castOperands(ctx: GpuContext, call: GemmCall, batch: number): [GemmOperand, GemmOperand] {
  const { M, N, K, a, b } = call;
  // stored shapes: A [M, K] or [K, M] (transA); B [K, N] or [N, K] (transB)
  const nA = call.transA ? extent(a, K, M, batch) : extent(a, M, K, batch);
  const nB = call.transB ? extent(b, N, K, batch) : extent(b, K, N, batch);
  const todo = [
    { o: a, n: nA },
    { o: b, n: nB },
  ].filter((x) => !x.o.f16);
  if (todo.length === 0) return [a, b];
  const outs = castToF16(
    ctx,
    todo.map((x) => ({ buf: x.o.buf, off: x.o.off ?? 0, n: x.n })),
  );
  const cast = new Map(
    todo.map((x, i) => [x.o, { buf: outs[i]!, ld: x.o.ld, stride: x.o.stride ?? 0, f16: true }]),
  );
  return [cast.get(a) ?? a, cast.get(b) ?? b];
}

/** WebGPU's guaranteed limit on workgroups per dimension (the batch runs along z). */
const MAX_Z = 65535;

/**
 * Run one GEMM call on the GPU, C = α·op(A)·op(B) + β·C, with the tile and precision its plan
 * picks.
 */
export function gemm(ctx: GpuContext, call: GemmCall): void {
  const { M, N } = call;
  const batch = call.batch ?? 1;
  if (M === 0 || N === 0 || batch === 0) return;
  const plan = gemmPlan(ctx, call);
  if (plan.f16) {
    // The f16 copies live until the dispatches that read them are done (released after).
    const [a16, b16] = castOperands(ctx, call, batch);
    run(ctx, { ...call, a: a16, b: b16 }, plan);
    if (a16 !== call.a) ctx.release(a16.buf);
    if (b16 !== call.b) ctx.release(b16.buf);
    return;
  }
  run(ctx, call, plan);
}

/** How `gemm` runs a call: the tile, each operand's loads, and the f16 storage if mixed. */
export interface GemmPlan {
  tile: GemmTile;
  loadA: GemmLoad;
  loadB: GemmLoad;
  /** Set when the operands are rounded to f16 first. */
  f16: F16Storage | null;
}

export function gemmPlan(ctx: GpuContext, call: GemmCall): GemmPlan {
  const batch = call.batch ?? 1;
  const tile = call.tile ?? gemmTileFor(call.M, call.N, batch);
  const operands =
    call.operands ??
    (() => {
      const s = gpuPrecision(ctx);
      return s.precision === "mixed" ? { f16: s.storage } : "f32";
    })();
  if (operands === "f32" && (call.a.f16 || call.b.f16))
    throw new Error("webgpu gemm: an operand rounded to f16 in a product with f32 operands");
  if (operands !== "f32") {
    const load: GemmLoad = operands.f16 === "native" ? "f16" : "f16packed";
    return { tile, loadA: load, loadB: load, f16: operands.f16 };
  }
  // vec4 loads where the operand's layout allows them (the same sums as scalar loads)
  const vec = call.vec4 ?? true;
  const loadOf = (o: GemmOperand): GemmLoad =>
    vec && vec4Ok(o.off ?? 0, o.ld, batch > 1 ? (o.stride ?? 0) : 0) ? "vec4" : "f32";
  return { tile, loadA: loadOf(call.a), loadB: loadOf(call.b), f16: null };
}

function run(ctx: GpuContext, call: GemmCall, plan: GemmPlan): void {
  const { M, N, K, a, b, c } = call;
  const batch = call.batch ?? 1;
  const tile = plan.tile;
  const kernel = gemmKernel(call.transA, call.transB, tile, plan.loadA, plan.loadB);
  const split = batch === 1 ? (call.splitK ?? splitKFor(M, N, K, tile)) : 1;
  const base = {
    M,
    N,
    K,
    lda: a.ld,
    ldb: b.ld,
    strideA: a.stride ?? 0,
    strideB: b.stride ?? 0,
    splitK: 0,
  };
  if (split > 1) {
    // Chunks of whole BK steps; the S partials [S, M, N] are then summed in order into C.
    const chunk = Math.ceil(K / split / tile.bk) * tile.bk;
    const S = Math.ceil(K / chunk);
    const to = partialsTarget(
      ctx,
      { S, M, N, c, beta: call.beta ?? 0, bias: call.bias },
      call.sumInto,
    );
    ctx.run(
      kernel,
      { A: a.buf, B: b.buf, bias: placeholder(ctx), C: to.buf },
      {
        ...base,
        ldc: N,
        offA: a.off ?? 0,
        offB: b.off ?? 0,
        offC: 0,
        strideA: 0,
        strideB: 0,
        strideC: M * N,
        beta: to.beta,
        hasBias: 0,
        splitK: chunk,
      },
      [groups(N, tile.bn), groups(M, tile.bm), S],
    );
    to.finish();
    return;
  }
  // C is written (or added to) whole here: a value it still holds as partials is summed first
  call.sumInto?.settle();
  // Batches beyond the z limit run as several dispatches over consecutive entries.
  const zLimit = Math.min(MAX_Z, call.zLimit ?? MAX_Z);
  for (let first = 0; first < batch; first += zLimit) {
    const at = (o: GemmOperand) => (o.off ?? 0) + first * (o.stride ?? 0);
    ctx.run(
      kernel,
      { A: a.buf, B: b.buf, bias: call.bias ?? placeholder(ctx), C: c.buf },
      {
        ...base,
        ldc: c.ld,
        offA: at(a),
        offB: at(b),
        offC: at(c),
        strideC: c.stride ?? 0,
        beta: call.beta ?? 0,
        hasBias: call.bias ? 1 : 0,
      },
      [groups(N, tile.bn), groups(M, tile.bm), Math.min(zLimit, batch - first)],
    );
  }
}

/** A product's S partials [S, M, N] and how they join C (+ bias, + beta·C). */
export interface Partials {
  S: number;
  M: number;
  N: number;
  c: GemmOperand;
  beta: 0 | 1;
  bias?: GPUBuffer;
}

/** C = Σ_s partials[s] in s order (+ bias, + beta·C), then the partials' buffer is released. */
function sumPartials(ctx: GpuContext, s: Partials, partials: GPUBuffer, C: GPUBuffer): void {
  const { M, N, S, c } = s;
  ctx.run(
    splitKSumKernel,
    { P: partials, bias: s.bias ?? placeholder(ctx), C },
    { M, N, S, ldc: c.ld, offC: c.off ?? 0, beta: s.beta, hasBias: s.bias ? 1 : 0 },
    grid(M * N, SPLITK_GROUP),
  );
  // Dispatches run in order, so a later use of this buffer comes after the sum has read it.
  ctx.release(partials);
}

/**
 * Where a product's S partials go and how they end up in C. When C is the whole buffer of
 * tensor `into` (ld N, no offset, no bias), they stay there unsummed (`GpuTensor.deferSum`):
 * written into pending partials of the same layout with beta 1 when the product adds to C (a
 * weight's gradient at its next application: summed once, when read), else into a buffer of
 * their own left pending, summed by the consumer that reads the tensor next or by the sum
 * dispatch before any other read. Otherwise they are summed into C at `finish`.
 */
export function partialsTarget(
  ctx: GpuContext,
  s: Partials,
  into?: GpuTensor,
): { buf: GPUBuffer; beta: 0 | 1; finish: () => void } {
  const { S, M, N, c } = s;
  const whole =
    into !== undefined &&
    !s.bias &&
    (c.off ?? 0) === 0 &&
    c.ld === N &&
    into.size === M * N &&
    !into.released &&
    into.storage === c.buf;
  const acc = whole && s.beta === 1 ? into.accumulator(S, M * N) : null;
  if (acc) return { buf: acc, beta: 1, finish: () => {} };
  const partials = ctx.allocBytes(S * M * N * 4);
  const finish = () => {
    const sum = (C: GPUBuffer) => sumPartials(ctx, s, partials, C);
    if (whole) into.deferSum({ buf: partials, S, stride: M * N }, sum, s.beta === 1);
    else {
      into?.settle();
      sum(c.buf);
    }
  };
  return { buf: partials, beta: 0, finish };
}
