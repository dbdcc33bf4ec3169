/**
 * The native GEMM on the layer shapes of a training step, with its operands in cache ("hot", the
 * usual benchmark) and evicted ("cold": a 64 MB sweep is written before each timed call, as a
 * step's backward finds the activations its forward saved many layers earlier). The gap is what
 * memory costs a GEMM inside the step, which no register tile removes.
 */
import type { Rng } from "@loop/tensor";
import type { TensorAddon } from "@loop/tensor/node";
import type { BenchContext } from "./context.js";
import type { Row } from "./table.js";
import { median } from "./timer.js";

/** [label, transA, transB, M, N, K]: a linear layer's x·Wᵀ, its dX = G·W and dW = Gᵀ·X. */
const STEP_SHAPES: [string, boolean, boolean, number, number, number][] = [
  ["Mano in_proj x·Wᵀ", false, true, 1536, 320, 128],
  ["Mano in_proj dX = G·W", false, false, 1536, 128, 320],
  ["Mano in_proj dW = Gᵀ·X", true, false, 320, 128, 1536],
  ["D256 in_proj x·Wᵀ", false, true, 4096, 640, 256],
  ["D256 in_proj dW = Gᵀ·X", true, false, 640, 256, 4096],
];

const SWEEP_FLOATS = 16 << 20; // 64 MB: past the last-level cache of the machines we run on

export async function coldGemmRows(
  ctx: BenchContext,
  sgemm: TensorAddon["sgemm"],
  setThreads: (n: number) => void,
  rng: Rng,
): Promise<Row[]> {
  const sweep = new Float32Array(SWEEP_FLOATS);
  const evict = () => {
    for (let i = 0; i < sweep.length; i += 16) sweep[i]! += 1; // one write per cache line
  };
  const repeats = ctx.quick ? 3 : 15;
  const random = (n: number) => Float32Array.from({ length: n }, () => rng.normal());
  // each shape's operands once, for every thread count
  const operands = STEP_SHAPES.map(([, , , M, N, K]) => ({
    A: random(M * K),
    B: random(K * N),
    C: new Float32Array(M * N),
  }));
  const rows: Row[] = [];
  for (const threads of ctx.threadCounts) {
    await ctx.setThreads(threads);
    setThreads(threads);
    for (const [s, [label, tA, tB, M, N, K]] of STEP_SHAPES.entries()) {
      const { A, B, C } = operands[s]!;
      const run = () => sgemm(tA, tB, M, N, K, 1, A, 0, tA ? M : K, B, 0, tB ? K : N, 0, C, 0, N);
      const time = (cold: boolean) => {
        const ms: number[] = [];
        for (let r = 0; r < repeats + 2; r++) {
          if (cold) evict();
          const t0 = performance.now();
          run();
          if (r >= 2) ms.push(performance.now() - t0);
        }
        return median(ms);
      };
      const hot = time(false);
      const cold = time(true);
      const g = (ms: number) => Number(((2 * M * N * K) / ms / 1e6).toFixed(1));
      rows.push({
        product: label,
        "op(A)·op(B)": `${tA ? "T" : "N"}${tB ? "T" : "N"} ${M}×${N}×${K}`,
        threads,
        "hot ms": Number(hot.toFixed(3)),
        "cold ms": Number(cold.toFixed(3)),
        "hot GFLOP/s": g(hot),
        "cold GFLOP/s": g(cold),
        "cold/hot": Number((cold / hot).toFixed(2)),
      });
    }
  }
  return rows;
}
