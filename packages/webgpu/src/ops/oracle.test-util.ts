/**
 * Test helper: run a GPU op and its @loop/tensor twin (the oracle) on the same seeded random
 * inputs, compare every output, then seed each output with the same random gradient on both
 * sides and compare every input gradient. |gpu − cpu| ≤ tol·(1 + |cpu|) elementwise.
 */
import { backward, IntTensor, intTensor, Rng, type Shape, type Tensor, tensor } from "@loop/tensor";
import { expect } from "vitest";
import type { GpuContext } from "../gpu-context.js";
import { emptyLike, type GpuTensor, releaseTransients, uploadTensor } from "../gpu-tensor.js";
import { backwardGpu, recordGpu } from "../tape.js";
import { fillTensor } from "./elementwise.js";

export interface OracleInput {
  shape: Shape;
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
}

const size = (s: Shape) => s.reduce((p, d) => p * d, 1);

export function expectClose(
  what: string,
  got: Float32Array,
  want: Float32Array,
  tol: number,
): void {
  expect(got.length, `${what}: length`).toBe(want.length);
  let worst = -1;
  let worstErr = 0;
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const g = got[i]!;
    if (Number.isNaN(w) && Number.isNaN(g)) continue;
    const err = Math.abs(g - w) / (1 + Math.abs(w));
    if (!(err <= worstErr)) {
      worstErr = Number.isNaN(err) ? Number.POSITIVE_INFINITY : err;
      worst = i;
    }
  }
  if (worstErr > tol)
    expect.fail(
      `${what}: at ${worst} gpu ${got[worst]} vs cpu ${want[worst]} (relative error ${worstErr.toExponential(2)} > ${tol})`,
    );
}

/** A one-element root whose backward hands `seeds` to `outs` (seeds several outputs at once). */
function seedRoot(ctx: GpuContext, outs: GpuTensor[], seeds: GpuTensor[]): GpuTensor {
  const root = emptyLike(ctx, [1]);
  recordGpu("seedRoot", outs, [root], () => seeds);
  return root;
}

export async function checkAgainstCpu(ctx: GpuContext, c: OracleCase): Promise<void> {
  const rng = new Rng(c.seed);
  const tol = c.tol ?? 1e-4;
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
    cpuIn.push(tensor(v, inp.shape, needs));
    gpuIn.push(uploadTensor(ctx, v, inp.shape, { persistent: true, requiresGrad: needs }));
  }
  const asList = <T>(o: T | T[]) => (Array.isArray(o) ? o : [o]);
  const cpuOut = asList(c.cpu(cpuIn));
  const gpuOut = asList(c.gpu(gpuIn));
  expect(gpuOut.length, "number of outputs").toBe(cpuOut.length);
  for (let k = 0; k < cpuOut.length; k++) {
    expect(gpuOut[k]!.shape, `output ${k} shape`).toEqual(cpuOut[k]!.shape);
    expectClose(`output ${k}`, await gpuOut[k]!.read(), cpuOut[k]!.data, tol);
  }
  if (!c.forwardOnly && cpuIn.some((t) => !(t instanceof IntTensor) && t.requiresGrad)) {
    const seeds = cpuOut.map((o) => rng.fillNormal(new Float32Array(o.size)));
    backward(cpuOut, seeds);
    const gpuSeeds = seeds.map((s, k) => uploadTensor(ctx, s, gpuOut[k]!.shape));
    backwardGpu(seedRoot(ctx, gpuOut, gpuSeeds), fillTensor(ctx, [1], 1));
    for (let i = 0; i < cpuIn.length; i++) {
      const t = cpuIn[i]!;
      if (t instanceof IntTensor || !t.requiresGrad) continue;
      const want = t.grad ?? new Float32Array(t.size);
      const g = gpuIn[i]!.grad;
      expectClose(
        `gradient of input ${i}`,
        g ? await g.read() : new Float32Array(t.size),
        want,
        tol,
      );
    }
  }
  for (const t of gpuIn) t.dispose();
  releaseTransients(ctx);
}
