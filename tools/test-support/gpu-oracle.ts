/**
 * The WebGPU op tests' comparison with the CPU twin (the oracle): `checkAgainstCpu` runs both
 * on the same seeded inputs, compares every output, then seeds each output with the same random
 * gradient on both sides and compares every input gradient; `expectClose` is the elementwise
 * float32 check, |gpu − cpu| ≤ tol·(1 + |cpu|), naming the worst element.
 */
import { backward, IntTensor, intTensor, Rng, type Shape, type Tensor, tensor } from "@loop/tensor";
import {
  backwardGpu,
  type GpuContext,
  type GpuTensor,
  gpuParameter,
  releaseTransients,
  uploadTensor,
} from "@loop/webgpu";
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

/** Largest |a − b| / (1 + |b|) (∞ where one is NaN and the other is not). */
export function maxScaledError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  return worstElement(a, b).err;
}

function worstElement(got: ArrayLike<number>, want: ArrayLike<number>) {
  let at = -1;
  let err = 0;
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const g = got[i]!;
    if (Number.isNaN(w) && Number.isNaN(g)) continue;
    const e = Math.abs(g - w) / (1 + Math.abs(w));
    if (!(e <= err)) {
      err = Number.isNaN(e) ? Number.POSITIVE_INFINITY : e;
      at = i;
    }
  }
  return { at, err };
}

/**
 * Expect |actual − expected| ≤ tol·(1 + |expected|) everywhere (float32 results of differently
 * ordered sums; NaN where the oracle has NaN); the message names the worst element.
 */
export async function expectClose(
  actual: GpuTensor | Float32Array,
  expected: ArrayLike<number>,
  what: string,
  tol = 1e-4,
): Promise<void> {
  const got = actual instanceof Float32Array ? actual : await actual.read();
  expect(got.length, `${what}: length`).toBe(expected.length);
  const { at, err } = worstElement(got, expected);
  if (err > tol)
    expect.fail(
      `${what}: at ${at} gpu ${got[at]} vs cpu ${expected[at]} (relative error ${err.toExponential(2)} > ${tol})`,
    );
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
  /** Relative tolerance (default 1e-4). */
  tol?: number;
  /** Only compare the forward outputs. */
  forwardOnly?: boolean;
  /** Run the GPU op on a NaN-filled pool (poisonPool). Default true. */
  poison?: boolean;
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
    backwardGpu(seedRoot(ctx, gpuOut, gpuSeeds), fillTensor(ctx, [1], 1));
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
