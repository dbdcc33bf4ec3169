/**
 * Finite-difference gradient checker used by the tests of every fused op in the project.
 * For a random upstream gradient dy it compares the analytic gradient of f = Σ y ⊙ dy (from the
 * tape) with central differences (f(x+h) − f(x−h)) / 2h, each f re-evaluated with float64
 * accumulation of Σ y ⊙ dy. Errors are measured relative to the largest analytic entry.
 */
import { backward } from "./autograd/backward.js";
import { noGrad } from "./autograd/node.js";
import { Rng } from "./rng.js";
import type { Tensor } from "./tensor.js";

export interface GradcheckOptions {
  /** Step h (default 1e-2: float32 forward passes need a large step). */
  eps?: number;
  /** Max allowed |num − ana| / max(|ana|, floor) (default 2e-2). */
  tol?: number;
  /** Check at most this many entries per input (random subset), default 64. */
  maxPerInput?: number;
  seed?: number;
}

export interface GradcheckResult {
  maxError: number;
  worst: { input: number; index: number; analytic: number; numeric: number } | null;
}

function outputsOf(y: Tensor | readonly Tensor[]): readonly Tensor[] {
  return Array.isArray(y) ? (y as readonly Tensor[]) : [y as Tensor];
}

/**
 * Check the gradient of `fn` at `inputs` (the tensors whose gradients are checked must have
 * requiresGrad = true). Throws with the worst entry when the error exceeds `tol`.
 */
export function gradcheck(
  fn: () => Tensor | readonly Tensor[],
  inputs: readonly Tensor[],
  opts: GradcheckOptions = {},
): GradcheckResult {
  const eps = opts.eps ?? 1e-2;
  const tol = opts.tol ?? 2e-2;
  const maxPer = opts.maxPerInput ?? 64;
  const rng = new Rng(opts.seed ?? 1234);
  const ys = outputsOf(fn());
  const dys = ys.map((y) => rng.fillUniform(new Float32Array(y.size), -1, 1));
  const f = (): number => {
    const out = noGrad(() => outputsOf(fn()));
    let s = 0;
    out.forEach((y, k) => {
      const dy = dys[k]!;
      for (let i = 0; i < y.size; i++) s += y.data[i]! * dy[i]!;
    });
    return s;
  };
  for (const t of inputs) t.grad = null;
  const roots = ys.filter((y) => y.requiresGrad);
  backward(
    roots,
    ys.flatMap((y, k) => (y.requiresGrad ? [dys[k]!] : [])),
  );
  let maxError = 0;
  let worst: GradcheckResult["worst"] = null;
  inputs.forEach((t, ti) => {
    const ana = t.grad ?? new Float32Array(t.size);
    let scale = 1e-3;
    for (let i = 0; i < ana.length; i++) scale = Math.max(scale, Math.abs(ana[i]!));
    const idx = [...Array(t.size).keys()];
    if (idx.length > maxPer) rng.shuffle(idx);
    for (const i of idx.slice(0, maxPer)) {
      const orig = t.data[i]!;
      t.data[i] = orig + eps;
      const fp = f();
      t.data[i] = orig - eps;
      const fm = f();
      t.data[i] = orig;
      const num = (fp - fm) / (2 * eps);
      const err = Math.abs(num - ana[i]!) / scale;
      if (err > maxError) {
        maxError = err;
        worst = { input: ti, index: i, analytic: ana[i]!, numeric: num };
      }
    }
  });
  if (maxError > tol) {
    const w = worst!;
    throw new Error(
      `gradcheck: input ${w.input} entry ${w.index}: analytic ${w.analytic} vs numeric ${w.numeric} (relative error ${maxError.toExponential(2)} > ${tol})`,
    );
  }
  return { maxError, worst };
}
