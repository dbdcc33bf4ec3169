/**
 * The WebGPU op tests' comparison with the CPU twin (the oracle): `checkAgainstCpu` runs both
 * on the same seeded inputs, compares every output, then seeds each output with the same random
 * gradient on both sides and compares every input gradient; `expectClose` is the elementwise
 * float32 check, |gpu − cpu| ≤ atol + rtol·|cpu|, naming the worst element.
 */
import { backward, IntTensor, intTensor, Rng, type Shape, type Tensor, tensor } from "@loop/tensor";
import { type GpuContext, type GpuTensor, releaseTransients, uploadTensor } from "@loop/webgpu";
import { backwardGpu, gpuParameter } from "@loop/webgpu/internal";
import { emptyLike, fillTensor, recordGpu } from "@loop/webgpu/kernel";
import { expect } from "vitest";

/** A CPU tensor's values as a GPU leaf (trainable unless `requiresGrad` is false). */
export function toGpu(ctx: GpuContext, t: Tensor, requiresGrad = true): GpuTensor {
  return requiresGrad
    ? gpuParameter(ctx, t.data.slice(), t.shape)
    : uploadTensor(ctx, t.data.slice(), t.shape);
}

/** An int CPU tensor (targets, ids) as an i32 GPU tensor. */
export function toGpuInt(ctx: GpuContext, t: IntTensor): GpuTensor {
  return uploadTensor(ctx, Int32Array.from(t.data), t.shape);
}

/**
 * Per-element tolerance of a GPU result against its CPU twin: |gpu − cpu| ≤ atol + rtol·|cpu|.
 * A plain number is rtol, with atol = rtol/20 (5e-6 for the default rtol 1e-4). Why that atol:
 * both sides are float32 sums of the same terms in different orders, which differ by about
 * u·√n·|terms| (u = 2⁻²⁴) whatever the size of the result, so a result near zero needs an
 * absolute floor; measured over the WebGPU suites (values of order 0.1–10) the floor needed at
 * rtol is at most 0.013·rtol, so rtol/20 keeps a margin of four while a small element that is
 * wrong by more than 5e-6 fails (a tolerance of tol·(1 + |cpu|) would let any element below
 * 1e-4 through whatever its value).
 */
export type Tolerance = number | { atol: number; rtol: number };

function bounds(tol: Tolerance): { atol: number; rtol: number } {
  return typeof tol === "number" ? { atol: tol / 20, rtol: tol } : tol;
}

/** The element furthest outside its bound: |g − w| / (atol + rtol·|w|) (∞ for a lone NaN). */
function worstElement(got: ArrayLike<number>, want: ArrayLike<number>, tol: Tolerance) {
  const { atol, rtol } = bounds(tol);
  let at = -1;
  let ratio = 0;
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const g = got[i]!;
    if (Number.isNaN(w) && Number.isNaN(g)) continue;
    const diff = Math.abs(g - w);
    const allowed = atol + rtol * Math.abs(w);
    // (an exact tolerance, 0: any difference is infinitely far out)
    const r = diff === 0 ? 0 : allowed === 0 ? Number.POSITIVE_INFINITY : diff / allowed;
    if (!(r <= ratio)) {
      ratio = Number.isNaN(r) ? Number.POSITIVE_INFINITY : r;
      at = i;
    }
  }
  return { at, ratio };
}

/**
 * Expect |actual − expected| ≤ atol + rtol·|expected| at every element (float32 results of
 * differently ordered sums; NaN where the oracle has NaN); the message names the worst element.
 */
export async function expectClose(
  actual: GpuTensor | ArrayLike<number>,
  expected: ArrayLike<number>,
  what: string,
  tol: Tolerance = 1e-4,
): Promise<void> {
  const got = "read" in actual ? await actual.read() : actual;
  expect(got.length, `${what}: length`).toBe(expected.length);
  const { at, ratio } = worstElement(got, expected, tol);
  if (ratio > 1) {
    const { atol, rtol } = bounds(tol);
    const diff = Math.abs(got[at]! - expected[at]!);
    expect.fail(
      `${what}: at ${at} gpu ${got[at]} vs cpu ${expected[at]} (|diff| ${diff.toExponential(2)} > atol ${atol} + rtol ${rtol}·|cpu|)`,
    );
  }
}

/** Random N(0, 1) data of `shape` from `seed`, or uniform in [lo, hi) when `lo` is given. */
export function randomData(shape: readonly number[], seed: number, lo?: number, hi?: number) {
  const rng = new Rng(seed);
  const d = new Float32Array(shape.reduce((a, b) => a * b, 1));
  if (lo === undefined) rng.fillNormal(d, 0, 1);
  else rng.fillUniform(d, lo, hi ?? lo + 1);
  return d;
}

/**
 * Fill the pool with NaN: buffers of every size class up to `maxBytes`, released again, so that
 * the op's outputs and temporaries come from NaN-filled buffers — any element a kernel fails
 * to write (or a temporary it reads before writing) shows up as NaN.
 */
export function poisonPool(ctx: GpuContext, maxBytes = 1 << 20, perClass = 12): void {
  const made: GpuTensor[] = [];
  for (let bytes = 256; bytes <= maxBytes; bytes *= 2)
    for (let k = 0; k < perClass; k++)
      made.push(uploadTensor(ctx, new Float32Array(bytes / 4).fill(Number.NaN), [bytes / 4]));
  for (const t of made) t.dispose();
}

export interface OracleInput {
  shape: Shape;
  /** Names the input in failure messages (default "input i"). */
  name?: string;
  /** Integer ids uniform in [lo, hi) (no gradient), or explicit values. */
  ints?: { lo: number; hi: number } | Int32Array;
  /** Float values uniform in [lo, hi) instead of N(0, 1). */
  range?: [number, number];
  /** Explicit float values. */
  values?: Float32Array;
  /** Compare this input's gradient (default true for floats). */
  grad?: boolean;
}

export interface OracleCase {
  inputs: OracleInput[];
  cpu(xs: (Tensor | IntTensor)[]): Tensor | Tensor[];
  gpu(xs: GpuTensor[]): GpuTensor | GpuTensor[];
  seed: number;
  /** Tolerance (default rtol 1e-4, atol 5e-6: see Tolerance). */
  tol?: Tolerance;
  /** Only compare the forward outputs. */
  forwardOnly?: boolean;
  /** Run the GPU op on a NaN-filled pool (poisonPool). Default true. */
  poison?: boolean;
  /** Free activations and gradients during the backward (`BackwardOptions.release`). */
  release?: boolean;
}

/** A one-element root whose backward hands `seeds` to `outs` (seeds several outputs at once). */
function seedRoot(ctx: GpuContext, outs: GpuTensor[], seeds: GpuTensor[]): GpuTensor {
  const root = emptyLike(ctx, [1]);
  recordGpu("seedRoot", outs, [root], () => seeds);
  return root;
}

const size = (s: Shape) => s.reduce((p, d) => p * d, 1);

export async function checkAgainstCpu(ctx: GpuContext, c: OracleCase): Promise<void> {
  const rng = new Rng(c.seed);
  const tol = c.tol ?? 1e-4;
  if (c.poison ?? true) poisonPool(ctx);
  const cpuIn: (Tensor | IntTensor)[] = [];
  const gpuIn: GpuTensor[] = [];
  for (const inp of c.inputs) {
    const n = size(inp.shape);
    const spec = inp.ints;
    if (spec) {
      const ints =
        spec instanceof Int32Array
          ? spec
          : Int32Array.from({ length: n }, () => rng.intIn(spec.lo, spec.hi - 1));
      cpuIn.push(intTensor(ints, inp.shape));
      gpuIn.push(uploadTensor(ctx, ints, inp.shape));
      continue;
    }
    const v =
      inp.values ??
      (inp.range
        ? rng.fillUniform(new Float32Array(n), inp.range[0], inp.range[1])
        : rng.fillNormal(new Float32Array(n)));
    const needs = !c.forwardOnly && (inp.grad ?? true);
    cpuIn.push(tensor(v.slice(), inp.shape, needs));
    gpuIn.push(uploadTensor(ctx, v, inp.shape, { persistent: true, requiresGrad: needs }));
  }
  const asList = <T>(o: T | T[]) => (Array.isArray(o) ? o : [o]);
  const cpuOut = asList(c.cpu(cpuIn));
  const gpuOut = asList(c.gpu(gpuIn));
  expect(gpuOut.length, "number of outputs").toBe(cpuOut.length);
  for (let k = 0; k < cpuOut.length; k++) {
    expect(gpuOut[k]!.shape, `output ${k} shape`).toEqual(cpuOut[k]!.shape);
    await expectClose(gpuOut[k]!, cpuOut[k]!.data, `output ${k}`, tol);
  }
  if (!c.forwardOnly && cpuIn.some((t) => !(t instanceof IntTensor) && t.requiresGrad)) {
    const seeds = cpuOut.map((o) => rng.fillNormal(new Float32Array(o.size)));
    backward(cpuOut, seeds);
    const gpuSeeds = seeds.map((s, k) => uploadTensor(ctx, s, gpuOut[k]!.shape));
    backwardGpu(seedRoot(ctx, gpuOut, gpuSeeds), fillTensor(ctx, [1], 1), {
      release: c.release ?? false,
    });
    for (let i = 0; i < cpuIn.length; i++) {
      const t = cpuIn[i]!;
      if (t instanceof IntTensor || !t.requiresGrad) continue;
      // No path from the outputs on the CPU: the GPU must report none or zeros.
      const want = t.grad ?? new Float32Array(t.size);
      const g = gpuIn[i]!.grad;
      const what = `gradient of ${c.inputs[i]!.name ?? `input ${i}`}`;
      await expectClose(g ?? new Float32Array(t.size), want, what, tol);
    }
  }
  for (const t of gpuIn) t.dispose();
  releaseTransients(ctx);
}
