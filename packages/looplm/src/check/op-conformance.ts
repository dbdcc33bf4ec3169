/*
 * One op case (op-cases.ts) on a backend against the CPU oracle. Both sides run the same code
 * through the generic ops on the same seeded inputs; every output is compared, then each output
 * is seeded with the same random gradient (loss = Σ_k ⟨out_k, seed_k⟩, built from the contract's
 * own `linear`, so any backend can take it) and every input gradient is compared. The oracle is
 * the CPU ops on the portable kernels with the reference GEMM (a plain triple loop), so even the
 * portable backend's SIMD GEMM is checked against something else.
 */
import { cpuBackendOpsOn } from "@loop/looped";
import { IGNORE_INDEX, Rng } from "@loop/tensor";
import { type CpuKernels, gemmRef } from "@loop/tensor/kernel";
import type { AnyOps, OpCase, Tolerance } from "./op-cases.js";

/** The CPU oracle's kernels: no native sets, the reference GEMM. */
export const ORACLE_KERNELS: CpuKernels = {
  sets: new Map(),
  gemm: { fn: gemmRef, name: "reference" },
};

/** The CPU oracle's ops. */
export const oracleOps = (): AnyOps => cpuBackendOpsOn(ORACLE_KERNELS) as AnyOps;

/** What a case computed on one side. */
export interface CaseValues {
  outputs: Float32Array[];
  /** Each compared input's gradient (zeros where it got none). */
  grads: { name: string; values: Float32Array }[];
}

/** The worst element of one compared tensor. */
export interface Worst {
  /** "output 0", "gradient of x". */
  what: string;
  /** |got − want| / (atol + rtol·|want|): ≤ 1 passes. */
  ratio: number;
  index: number;
  got: number;
  want: number;
}

/** A case's outcome: pass or fail, its worst element against its tolerance, or its error. */
export interface CaseResult {
  name: string;
  op: string;
  ok: boolean;
  tol: Tolerance;
  worst: Worst | null;
  /** The error a side threw, when one did. */
  error?: string;
  seconds: number;
}

const size = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

/** Σ_k ⟨outs_k, seeds_k⟩ as a one-element tensor, from `linear` and `binary` add only. */
function seededLoss(ops: AnyOps, outs: unknown[], seeds: Float32Array[]): unknown {
  let loss: unknown = null;
  outs.forEach((o, k) => {
    const n = size(ops.shapeOf(o));
    const s = ops.upload(seeds[k]!, [1, n]);
    const term = ops.reshape(ops.linear(ops.reshape(o, [1, n]), s), [1]);
    loss = loss === null ? term : ops.binary("add", loss, term);
  });
  return loss;
}

/** Run case `c` on `ops` with inputs from `seed`. */
export async function runOpCase(ops: AnyOps, c: OpCase, seed: number): Promise<CaseValues> {
  const rng = new Rng(seed);
  const xs: unknown[] = [];
  const floats: { name: string; t: unknown; n: number }[] = [];
  for (const inp of c.inputs) {
    const n = size(inp.shape);
    if (inp.ints !== undefined || inp.intValues) {
      const ids = inp.intValues
        ? Int32Array.from(inp.intValues)
        : Int32Array.from({ length: n }, (_v, k) => {
            const id = rng.int(inp.ints!);
            const every = inp.ignoreEvery;
            return every !== undefined && k % every === every - 2 ? IGNORE_INDEX : id;
          });
      xs.push(ops.uploadInt(ids, inp.shape));
      continue;
    }
    const v = new Float32Array(n);
    if (inp.range) rng.fillUniform(v, inp.range[0], inp.range[1]);
    else rng.fillNormal(v);
    const grad = inp.grad ?? true;
    const t = ops.upload(v, inp.shape, { persistent: true, requiresGrad: grad });
    xs.push(t);
    if (grad) floats.push({ name: inp.name, t, n });
  }
  const outs = c.run(ops, xs);
  const outputs: Float32Array[] = [];
  for (const o of outs) outputs.push(await ops.read(o));
  const grads: CaseValues["grads"] = [];
  if (c.backward ?? true) {
    const seeds = outputs.map((o) => rng.fillNormal(new Float32Array(o.length)));
    ops.backward(seededLoss(ops, outs, seeds), 1);
    for (const { name, t, n } of floats)
      grads.push({ name, values: (await ops.readGrad(t)) ?? new Float32Array(n) });
  }
  for (const x of xs) if (floats.some((f) => f.t === x)) ops.dispose(x);
  ops.releaseTransients();
  return { outputs, grads };
}

/** The element of `got` furthest outside the tolerance (NaN where `want` is NaN passes). */
export function worstOf(
  what: string,
  got: ArrayLike<number>,
  want: ArrayLike<number>,
  tol: Tolerance,
): Worst {
  if (got.length !== want.length)
    return {
      what: `${what} (length ${got.length} vs ${want.length})`,
      ratio: Infinity,
      index: -1,
      got: NaN,
      want: NaN,
    };
  let w: Worst = { what, ratio: 0, index: -1, got: 0, want: 0 };
  for (let i = 0; i < want.length; i++) {
    const a = got[i]!;
    const b = want[i]!;
    if (Number.isNaN(a) && Number.isNaN(b)) continue;
    const diff = Math.abs(a - b);
    const allowed = tol.atol + tol.rtol * Math.abs(b);
    const r = diff === 0 ? 0 : Number.isNaN(diff) ? Infinity : diff / allowed;
    if (r > w.ratio || (w.index < 0 && i === 0)) w = { what, ratio: r, index: i, got: a, want: b };
  }
  return w;
}

/** Compare a backend's values with the oracle's: the worst element over every tensor. */
export function compareValues(got: CaseValues, want: CaseValues, tol: Tolerance): Worst {
  const all: Worst[] = [];
  want.outputs.forEach((w, k) => {
    all.push(worstOf(`output ${k}`, got.outputs[k] ?? new Float32Array(0), w, tol));
  });
  if (got.outputs.length !== want.outputs.length)
    all.push({
      what: `${got.outputs.length} outputs, not ${want.outputs.length}`,
      ratio: Infinity,
      index: -1,
      got: NaN,
      want: NaN,
    });
  want.grads.forEach((w, k) => {
    all.push(
      worstOf(`gradient of ${w.name}`, got.grads[k]?.values ?? new Float32Array(0), w.values, tol),
    );
  });
  return worstOfAll(all);
}

/**
 * A case run and timed: the worst element `run` finds against `base.tol` (ok when its ratio is at
 * most 1), or the first line of what it threw as the case's error.
 */
export async function timedCase(
  base: { name: string; op: string; tol: Tolerance },
  run: () => Promise<Worst>,
): Promise<CaseResult> {
  const t0 = performance.now();
  const seconds = () => (performance.now() - t0) / 1000;
  try {
    const worst = await run();
    return { ...base, ok: worst.ratio <= 1, worst, seconds: seconds() };
  } catch (e) {
    const error = e instanceof Error ? e.message.split("\n")[0]! : String(e);
    return { ...base, ok: false, worst: null, error, seconds: seconds() };
  }
}

/** The worst of several comparisons (the first of equals). */
export function worstOfAll(all: readonly Worst[]): Worst {
  return all.reduce((a, b) => (b.ratio > a.ratio ? b : a));
}

/** Case `c` on `ops` against the oracle (`oracle`: the CPU oracle's ops). */
export async function checkOpCase(
  ops: AnyOps,
  oracle: AnyOps,
  c: OpCase,
  seed: number,
  tol: Tolerance = c.tol,
): Promise<CaseResult> {
  return timedCase({ name: c.name, op: c.op, tol }, async () => {
    const want = await runOpCase(oracle, c, seed);
    const got = await runOpCase(ops, c, seed);
    return compareValues(got, want, tol);
  });
}
