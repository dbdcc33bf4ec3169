/**
 * Exit-gate op timings: forward + backward of each fused op of @loop/exit-gate on one batch,
 * against the same maths in eager PyTorch (benchmarks/torch/exit-gate.py, 1 thread) when
 * /usr/bin/python3 has torch. Shapes R B T D V = 4 8 512 512 512, or `LOOP_BENCH_EXIT_GATE`
 * ("R,B,T,D,V"). Prints median milliseconds and the looplm/PyTorch time ratio (lower is better).
 * The "composed" rows are the same maths written once over the backend kernels
 * (@loop/exit-gate's `…On`, what device backends and the trainer's stage losses run), here on
 * the CPU's kernels, beside the CPU model's fused float64 ops.
 */
import {
  exitPdf,
  exitPdfOn,
  gateLogits,
  gateLogitsOn,
  mixtureLogits,
  stage1Loss,
  stage1LossOn,
  stage1Objective,
  stage2Loss,
  stage2LossOn,
  stage2Objective,
} from "@loop/exit-gate";
import {
  backward,
  cpuTensorOps,
  cpuTransferOps,
  intTensor,
  noGrad,
  Rng,
  type Tensor,
  tensor,
} from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import type { BenchContext } from "./lib/context.js";
import type { Row } from "./lib/table.js";

export const name = "exit-gate";
export const description = "exit-gate fused ops, forward + backward, vs eager PyTorch (1 thread)";

function shapes(): [number, number, number, number, number] {
  const env = process.env.LOOP_BENCH_EXIT_GATE;
  if (!env) return [4, 8, 512, 512, 512];
  const v = env.split(",").map(Number);
  if (v.length !== 5 || v.some((x) => !Number.isInteger(x) || x < 1))
    throw new Error(`LOOP_BENCH_EXIT_GATE: expected five positive integers R,B,T,D,V, got ${env}`);
  return v as [number, number, number, number, number];
}

export async function run(ctx: BenchContext): Promise<void> {
  const [R, B, T, D, V] = shapes();
  const reps = ctx.quick ? 3 : 7;
  await ctx.setThreads(1);
  const readouts = Array.from({ length: R }, (_, r) => randn([B, T, D], 10 + r));
  const w = randn([1, D], 1, { std: 1 / Math.sqrt(D) });
  const b = randn([1], 2);
  const a0 = randn([R, B, T], 3);
  const logits = Array.from({ length: R }, (_, r) => randn([B, T, V], 20 + r));
  const rng = new Rng(4);
  const targets = intTensor(
    Array.from({ length: B * T }, (_, i) => (i % 3 === 0 ? -100 : rng.int(V))),
    [B, T],
  );
  const ce0 = tensor(rng.fillUniform(new Float32Array(R * B * T), 2, 3), [R, B, T], true);
  const ceConst = tensor(ce0.data, ce0.shape, false);
  const pdf = tensor(exitPdf(a0).data, [R, B, T], true);
  const ones = (t: Tensor) => new Float32Array(t.size).fill(1);
  const cpu = { ...cpuTransferOps, ...cpuTensorOps, noGrad };
  const cases: Record<string, () => Tensor> = {
    gateLogits: () => gateLogits(readouts, w, b),
    exitPdf: () => exitPdf(a0),
    stage1Objective: () => stage1Objective(a0, ce0, targets),
    stage2Objective: () => stage2Objective(a0, ceConst, targets),
    mixtureLogits: () => mixtureLogits(logits, pdf),
    "stage1 end-to-end": () => stage1Loss(gateLogits(readouts, w, b), logits, targets),
    "exitPdf composed": () => exitPdfOn(cpu, a0),
    "stage1 end-to-end composed": () =>
      stage1LossOn(cpu, gateLogitsOn(cpu, readouts, w, b), logits, targets),
    "stage2 end-to-end": () =>
      stage2Loss({ logits: (r) => gateLogits(r, w, b) }, readouts, logits, targets),
    "stage2 end-to-end composed": () =>
      stage2LossOn(cpu, { logits: (r) => gateLogitsOn(cpu, r, w, b) }, readouts, logits, targets),
  };
  const ours: Record<string, number> = {};
  for (const [k, fn] of Object.entries(cases)) {
    const t = await ctx.time(
      () => {
        const y = fn();
        backward([y], [ones(y)]);
      },
      { warmup: 2, repeats: reps },
    );
    ours[k] = t.medianMs;
  }
  // after our runs, never alongside them
  const torch = (await ctx.torch("exit-gate.py", [
    JSON.stringify({ R, B, T, D, V, reps }),
  ])) as Record<string, number> | null;
  if (torch === null)
    ctx.log('PyTorch comparison skipped: `/usr/bin/python3 -c "import torch"` failed.');
  const rows: Row[] = Object.keys(cases).map((k) => {
    const o = ours[k]!;
    const t = torch?.[k];
    const row: Row = { op: k, "looplm ms": Number(o.toFixed(2)) };
    if (t !== undefined) {
      row["PyTorch ms"] = Number(t.toFixed(2));
      row["looplm/PyTorch"] = Number((o / t).toFixed(2));
    }
    return row;
  });
  ctx.table(
    rows,
    `exit-gate ops, forward + backward, R=${R} B=${B} T=${T} D=${D} V=${V}, median of ${reps}, 1 thread`,
  );
}
