import { useThreadPool } from "@loop/test-support";
import { beforeAll, describe, expect, it } from "vitest";
import { backward } from "../autograd/backward.js";
import { startThreadPool, stopThreadPool } from "../node/threads.js";
import { randn } from "../random-tensor.js";
import { Rng } from "../rng.js";
import { allocF32, intTensor, type Tensor } from "../tensor.js";
import { currentPool, installPool } from "../threads/pool.js";
import { crossEntropy, IGNORE_INDEX } from "./loss.js";
import { concat, split } from "./shape.js";
import { sigmoidScalar, silu } from "./unary.js";

const logits = randn([3000, 64], 5, { requiresGrad: true, std: 4 });
const rngT = new Rng(6);
const targets = intTensor(
  Array.from({ length: 3000 }, (_, i) => (i % 7 === 0 ? IGNORE_INDEX : rngT.int(64))),
  [3000],
);

/** silu, split + concat and cross-entropy, forward and backward, as plain arrays. */
function runOps(x: Tensor, z: Tensor, g: Float32Array, gz: Float32Array): Float32Array[] {
  x.grad = null;
  z.grad = null;
  logits.grad = null;
  const ce = crossEntropy(logits, targets);
  backward(ce);
  const y = silu(x);
  backward(y, [g]);
  const parts = split(z, [5, 100, 3]);
  const back = concat([parts[2]!, parts[0]!, parts[1]!]);
  backward(back, [gz]);
  const outs = [y.data, x.grad!, ...parts.map((p) => p.data), back.data, z.grad!];
  return [...outs, ce.data, logits.grad!].map((a) => Float32Array.from(a));
}

describe("elementwise and cross-entropy kernels on a thread pool", () => {
  const posted = new Set<string>();
  const x = randn([300, 257], 1, { requiresGrad: true, std: 3 });
  const z = randn([2000, 108], 2, { requiresGrad: true });
  const rng = new Rng(3);
  // shared memory, as allocF32 gives every gradient inside the engine
  const g = rng.fillUniform(allocF32(x.size), -1, 1);
  const gz = rng.fillUniform(allocF32(z.size), -1, 1);
  let serial: Float32Array[] = [];

  beforeAll(() => {
    serial = runOps(x, z, g, gz); // before the pool starts
  });
  useThreadPool({ currentPool, installPool, startThreadPool, stopThreadPool }, 3, posted);

  it("match the single-thread results exactly, and workers take part", () => {
    const par = runOps(x, z, g, gz);
    expect(par.length).toBe(serial.length);
    par.forEach((a, i) => {
      expect(a).toEqual(serial[i]);
    });
    expect([...posted].sort()).toEqual(
      [
        "tensor/ce-bwd",
        "tensor/ce-fwd",
        "tensor/copy-rows",
        "tensor/silu-bwd",
        "tensor/silu-fwd",
      ].sort(),
    );
  });

  it("silu and its gradient follow the scalar reference", () => {
    const [y, gx] = runOps(x, z, g, gz);
    let worst = 0;
    for (let i = 0; i < x.size; i++) {
      const v = x.data[i]!;
      const s = 1 / (1 + Math.exp(-v));
      const ref = v * s;
      const gref = g[i]! * s * (1 + v * (1 - s));
      worst = Math.max(worst, Math.abs(y![i]! - ref), Math.abs(gx![i]! - gref));
      expect(sigmoidScalar(v)).toBeCloseTo(s, 7);
    }
    expect(worst).toBeLessThan(1e-5);
  });
});
