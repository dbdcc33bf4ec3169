/*
 * The CPU's AdamW element update (`TrainOps.adamw` of `cpuTrainOps`): the TypeScript loop, or its
 * native twin when the native kernels are registered.
 */
import type { AdamWStepConstants } from "../backend/train-ops.js";
import { kernelSet } from "../native-registry.js";

/**
 * Native twin of `adamwUpdate` (native/tensor.c `adamw`): the same double arithmetic, the same
 * bits.
 */
export type NativeAdamw = (
  w: Float32Array,
  g: Float32Array,
  m: Float32Array,
  v: Float32Array,
  n: number,
  decay: number,
  stepSize: number,
  beta1: number,
  beta2: number,
  eps: number,
  sc2: number,
) => void;

/** One AdamW update of `w` from `g` (AdamWStepConstants), each element in double. */
export function adamwUpdate(
  w: Float32Array,
  g: Float32Array,
  m: Float32Array,
  v: Float32Array,
  c: AdamWStepConstants,
): void {
  const { decay, stepSize, beta1: b1, beta2: b2, eps, sc2 } = c;
  const nat = kernelSet("tensor")?.adamw;
  if (nat) {
    nat(w, g, m, v, w.length, decay, stepSize, b1, b2, eps, sc2);
    return;
  }
  for (let i = 0; i < w.length; i++) {
    const gi = g[i]!;
    const mi = b1 * m[i]! + (1 - b1) * gi;
    const vi = b2 * v[i]! + (1 - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    w[i] = w[i]! * decay - (stepSize * mi) / (Math.sqrt(vi) * sc2 + eps);
  }
}
