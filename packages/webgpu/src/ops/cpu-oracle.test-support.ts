/**
 * Test support (not exported): run a CPU op (the oracle) and its GPU twin on the same inputs,
 * seed every output of both with the same random gradient, and compare the outputs and every
 * input gradient elementwise: |gpu − cpu| ≤ tol·(1 + |cpu|).
 */
import { backward, Rng, Tensor } from "@loop/tensor";
import { expect } from "vitest";
import type { GpuContext } from "../gpu-context.js";
import { emptyLike, type GpuTensor, gpuParameter, uploadTensor } from "../gpu-tensor.js";
import { backwardGpu, recordGpu } from "../tape.js";

export interface OracleInput {
  name: string;
  data: Float32Array;
  shape: readonly number[];
  /** Whether a gradient flows into it (default true). */
  grad?: boolean;
}

/** Largest |a − b| / (1 + |b|). */
export function maxScaledError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const e = Math.abs(a[i]! - b[i]!) / (1 + Math.abs(b[i]!));
    if (!(e <= m)) m = Number.isNaN(e) ? Number.POSITIVE_INFINITY : e;
  }
  return m;
}

/** Random N(0, 1) data of `shape` from `seed`. */
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

export async function compareWithCpu(opts: {
  ctx: GpuContext;
  inputs: OracleInput[];
  cpu: (t: Tensor[]) => Tensor[];
  gpu: (t: GpuTensor[]) => GpuTensor[];
  seed: number;
  tol?: number;
  /** Run the GPU op on a NaN-filled pool (poisonPool). Default true. */
  poison?: boolean;
}): Promise<void> {
  const { ctx, inputs, seed } = opts;
  const tol = opts.tol ?? 1e-4;
  const cpuIn = inputs.map((i) => new Tensor(i.data.slice(), i.shape, i.grad ?? true));
  const cpuOut = opts.cpu(cpuIn);
  const rng = new Rng(seed);
  const seeds = cpuOut.map((o) => {
    const s = new Float32Array(o.size);
    rng.fillNormal(s, 0, 1);
    return s;
  });
  backward(cpuOut, seeds);

  if (opts.poison ?? true) poisonPool(ctx);
  const gpuIn = inputs.map((i) =>
    (i.grad ?? true)
      ? gpuParameter(ctx, i.data, i.shape, i.name)
      : uploadTensor(ctx, i.data, i.shape, { name: i.name }),
  );
  const gpuOut = opts.gpu(gpuIn);
  expect(gpuOut.length).toBe(cpuOut.length);
  // One node that hands each output its seed: backward from a single root.
  const root = emptyLike(ctx, [1]);
  recordGpu("seeds", gpuOut, [root], () =>
    seeds.map((s, k) => uploadTensor(ctx, s, gpuOut[k]!.shape)),
  );
  backwardGpu(root, uploadTensor(ctx, new Float32Array(1), [1]));
  for (let k = 0; k < cpuOut.length; k++) {
    expect(gpuOut[k]!.shape, `output ${k} shape`).toEqual(cpuOut[k]!.shape);
    const err = maxScaledError(await gpuOut[k]!.read(), cpuOut[k]!.data);
    expect(err, `output ${k}`).toBeLessThanOrEqual(tol);
  }
  for (let k = 0; k < inputs.length; k++) {
    const want = cpuIn[k]!.grad;
    const got = gpuIn[k]!.grad;
    if (!(inputs[k]!.grad ?? true)) continue;
    const name = `gradient of ${inputs[k]!.name}`;
    if (!want) {
      // No path from the outputs on the CPU: the GPU must report none or zeros.
      if (got) expect(maxScaledError(await got.read(), new Float32Array(got.size)), name).toBe(0);
      continue;
    }
    expect(got, name).not.toBeNull();
    expect(maxScaledError(await got!.read(), want), name).toBeLessThanOrEqual(tol);
  }
  for (const t of gpuIn) t.dispose();
}
