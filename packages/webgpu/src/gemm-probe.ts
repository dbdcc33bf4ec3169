/*
 * A GEMM throughput probe for benchmarks: times `iters` dispatches of the tiled GEMM on one shape
 * between two `ctx.sync()` calls (after a warm-up dispatch that also compiles the pipeline) and
 * reports GFLOP/s = 2·M·N·K·iters / seconds. The operands are filled on the device, so nothing
 * large crosses from the CPU. Timings belong in benchmarks, never in tests.
 */
import type { GpuContext } from "./gpu-context.js";
import { emptyLike } from "./gpu-tensor.js";
import type { GemmTile } from "./kernels/gemm.js";
import { fillInPlace } from "./ops/elementwise-plain.js";
import { gemm } from "./ops/gemm.js";
import { type GpuPrecision, hasFeature } from "./precision.js";

/** What `gemmThroughput` measures: transposes, timed dispatches and the tile. */
export interface GemmProbeOptions {
  /** The transposes of the model's products: x·Wᵀ (transB), g·W (neither), gᵀ·x (transA). */
  transA?: boolean;
  transB?: boolean;
  /** Timed dispatches (default 10). */
  iters?: number;
  /** Default: the tile `gemmTileFor` picks for the shape. */
  tile?: GemmTile;
  /** false: scalar operand loads (default: vec4 where the layout allows). */
  vec4?: boolean;
  /** "mixed": f16 operands (native where the device has shader-f16, else packed), the cast timed too. */
  precision?: GpuPrecision;
}

/**
 * What `gemmThroughput` measured: the shape, dispatches and seconds (and the GFLOP/s they give).
 */
export interface GemmProbeResult {
  M: number;
  N: number;
  K: number;
  transA: boolean;
  transB: boolean;
  iters: number;
  seconds: number;
  gflops: number;
}

/** Time M×N×K GEMMs on the GPU and report their throughput. */
export async function gemmThroughput(
  ctx: GpuContext,
  M: number,
  N: number,
  K: number,
  opts: GemmProbeOptions = {},
): Promise<GemmProbeResult> {
  const transA = opts.transA ?? false;
  const transB = opts.transB ?? false;
  const iters = opts.iters ?? 10;
  if (![M, N, K, iters].every((v) => Number.isInteger(v) && v > 0))
    throw new Error(
      `gemmThroughput: M, N, K and iters must be positive integers, got ${M}, ${N}, ${K}, ${iters}`,
    );
  const a = emptyLike(ctx, [M, K]);
  const b = emptyLike(ctx, [K, N]);
  const c = emptyLike(ctx, [M, N]);
  fillInPlace(a, 0.5);
  fillInPlace(b, 0.25);
  const call = {
    transA,
    transB,
    M,
    N,
    K,
    a: { buf: a.buffer, ld: transA ? M : K },
    b: { buf: b.buffer, ld: transB ? K : N },
    c: { buf: c.buffer, ld: N },
    tile: opts.tile,
    vec4: opts.vec4,
    operands:
      opts.precision === "mixed"
        ? { f16: hasFeature(ctx, "shader-f16") ? ("native" as const) : ("packed" as const) }
        : ("f32" as const),
  };
  try {
    gemm(ctx, call);
    await ctx.sync();
    const t0 = performance.now();
    for (let i = 0; i < iters; i++) gemm(ctx, call);
    await ctx.sync();
    const seconds = (performance.now() - t0) / 1000;
    return {
      M,
      N,
      K,
      transA,
      transB,
      iters,
      seconds,
      gflops: (2 * M * N * K * iters) / seconds / 1e9,
    };
  } finally {
    for (const t of [a, b, c]) t.dispose();
  }
}
