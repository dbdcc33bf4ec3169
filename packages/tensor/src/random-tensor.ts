/* Shared helpers for tests of this and later packages: seeded random tensors. */
import { Rng } from "./rng.js";
import { allocF32, type Shape, sizeOf, Tensor } from "./tensor.js";

/** A tensor of N(0, std²) (or U[lo,hi) with `uniform`) values from a seeded stream. */
export function randn(
  shape: Shape,
  seed: number,
  opts: { std?: number; requiresGrad?: boolean } = {},
): Tensor {
  const rng = new Rng(seed);
  const d = allocF32(sizeOf(shape));
  rng.fillNormal(d, 0, opts.std ?? 1);
  return new Tensor(d, shape, opts.requiresGrad ?? true);
}

/** A tensor of uniform values in [lo, hi) from `seed` (tests and gradient checks). */
export function randu(
  shape: Shape,
  seed: number,
  lo: number,
  hi: number,
  requiresGrad = true,
): Tensor {
  const rng = new Rng(seed);
  const d = allocF32(sizeOf(shape));
  rng.fillUniform(d, lo, hi);
  return new Tensor(d, shape, requiresGrad);
}
