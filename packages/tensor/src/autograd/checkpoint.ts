/*
 * Activation checkpointing: run `fn(x)` without keeping its intermediate activations and
 * recompute them during the backward pass. Memory drops from every activation inside `fn` to
 * just its input; compute rises by one extra forward of `fn`.
 *
 * `params` must list every trainable leaf `fn` reads (besides `x`); their gradients are gathered
 * from the recomputed graph and handed to the outer tape like any op's input gradients.
 */
import { allocF32, Tensor } from "../tensor.js";
import { backward } from "./backward.js";
import { enableGrad, isGradEnabled, noGrad, record1 } from "./node.js";

/**
 * Activation checkpointing: y = fn(x) computed without recording a tape, and recomputed (with
 * `params` gathering gradients) during the backward pass, trading a second forward for the memory
 * of fn's activations.
 */
export function checkpoint(
  fn: (x: Tensor) => Tensor,
  x: Tensor,
  params: readonly Tensor[],
): Tensor {
  if (!isGradEnabled()) return fn(x);
  const y = noGrad(() => fn(x));
  const inputs = [x, ...params];
  return record1("checkpoint", inputs, y.data, y.shape, ([g], needs) => {
    const saved = params.map((p) => p.grad);
    for (const p of params) p.grad = null;
    const xin = new Tensor(x.data, x.shape, needs[0]!);
    try {
      const yr = enableGrad(() => fn(xin));
      if (yr.requiresGrad) backward(yr, [g!]);
      return [
        needs[0] ? (xin.grad ?? allocF32(x.size)) : null,
        ...params.map((p, i) => (needs[i + 1] ? p.grad : null)),
      ];
    } finally {
      params.forEach((p, i) => {
        p.grad = saved[i]!;
      });
    }
  });
}
