/*
 * Finite-difference gradient checker used by the tests of every fused op in the project.
 *
 * For a random upstream gradient dy it compares the analytic gradient of f = Σ y ⊙ dy (from the
 * tape) with a numeric derivative, entry by entry: every checked entry must satisfy
 *
 *     |analytic − numeric| + uncertainty ≤ atol + rtol·|numeric|
 *
 * on its own, so a small entry that is wrong (even only in sign) fails however large the
 * tensor's other gradients are. Inputs of at most `maxPerInput` entries are checked in full;
 * larger ones on a seeded random sample of that many.
 *
 * Why these steps and tolerances. The engine is float32 only: every Tensor holds a Float32Array
 * and every kernel computes in float32, so f cannot be evaluated in float64 (only the final sum
 * Σ y ⊙ dy is accumulated in float64). A numeric derivative then carries two errors:
 *  - rounding: each f is off by some units of u = 2⁻²⁴ ≈ 6e-8 times the part of Σ|y ⊙ dy| the
 *    entry moves, and the difference quotient divides that by the step: a float64-style step of
 *    1e-6 would give errors of order 1e-1. The step has to stay large.
 *  - truncation: a central difference D(h) = (f(x+h) − f(x−h)) / 2h is off by h²·f'''/6, about
 *    1e-5·f''' at h = 2⁻⁷: too much for a tight per-entry check on exp/softmax chains.
 * So the numeric derivative is the fourth-order stencil N(h) = (4·D(h) − D(2h))/3 (Richardson's
 * combination), off by h⁴·f⁽⁵⁾/30 ≈ 1e-10·f⁽⁵⁾ at h = 2⁻⁷, where the rounding part is about
 * 1.5·c·u·|f_local| / h ≈ 1e-5·c·|f_local| for a chain of c roundings. The default atol = 1e-3
 * covers that with margin for outputs of order 1–10 (the tests' random data); rtol = 1e-3 covers
 * the float32 rounding of the analytic gradient.
 *
 * Each entry compares two estimates, N(h) and N(h/2) from h = 2⁻⁶: their difference is the
 * estimate's uncertainty and counts against the entry, never for it. Where f bends on a scale
 * below h (a normalisation over values near zero, as a gated RMSNorm group whose gate is ~0.01,
 * or an embedding of scale 0.02 feeding a residual stream) the two disagree, so the step is
 * halved, at most to h/16 (below that rounding takes over), until an estimate and its
 * predecessor agree with each other and with the analytic value. An entry whose estimates never
 * settle fails, naming the spread.
 * h is a power of two so that x ± h is exact in float32 whenever it stays in x's binade; where
 * it rounds, each difference divides by the step float32 actually took.
 */
import { backward } from "./autograd/backward.js";
import { noGrad } from "./autograd/node.js";
import { Rng } from "./rng.js";
import type { Tensor } from "./tensor.js";

/** Tolerances and step of `gradcheck`. */
export interface GradcheckOptions {
  /** Step h of the first estimate N(h) (default 2⁻⁶; see the module comment). */
  eps?: number;
  /** Absolute part of the per-entry tolerance (default 1e-3). */
  atol?: number;
  /** Relative part of the per-entry tolerance, times |numeric| (default 1e-3). */
  rtol?: number;
  /**
   * Inputs with at most this many entries are checked in full; larger ones on a random sample of
   * this many entries (default 128).
   */
  maxPerInput?: number;
  seed?: number;
}

/**
 * One entry compared by `gradcheck`: analytic and numeric derivative, their uncertainty and the
 * allowed error.
 */
export interface GradcheckEntry {
  input: number;
  index: number;
  analytic: number;
  numeric: number;
  /** |N(h') − N(h'/2)| of the two estimates compared (it counts against the entry). */
  uncertainty: number;
  /** atol + rtol·|numeric| for this entry. */
  allowed: number;
}

/**
 * What `gradcheck` returns: entries compared and the worst ratio of error to allowance (≤ 1
 * passes).
 */
export interface GradcheckResult {
  /** Number of entries compared, over all inputs. */
  checked: number;
  /** Largest (|analytic − numeric| + uncertainty) / allowed over the entries (≤ 1 passes). */
  worstRatio: number;
  worst: GradcheckEntry | null;
}

/** How many times the step may be halved (N(h/16) at the finest: see the module comment). */
const HALVINGS = 4;

function outputsOf(y: Tensor | readonly Tensor[]): readonly Tensor[] {
  return Array.isArray(y) ? (y as readonly Tensor[]) : [y as Tensor];
}

/** The entries of an input to check: all of them when small, else a seeded sample. */
function entriesToCheck(size: number, maxPer: number, rng: Rng): number[] {
  const idx = [...Array(size).keys()];
  if (size <= maxPer) return idx;
  return rng.shuffle(idx).slice(0, maxPer);
}

/** Entry `i` of `t` against `analytic`: halve the step until two estimates settle on it. */
function checkEntry(
  f: () => number,
  t: Tensor,
  i: number,
  analytic: number,
  opts: { h: number; atol: number; rtol: number },
): Omit<GradcheckEntry, "input" | "index"> {
  /** Central difference at `step`, dividing by the step float32 actually took. */
  const central = (step: number): number => {
    const orig = t.data[i]!;
    t.data[i] = orig + step;
    const hi = t.data[i]!;
    const fp = f();
    t.data[i] = orig - step;
    const lo = t.data[i]!;
    const fm = f();
    t.data[i] = orig;
    return (fp - fm) / (hi - lo);
  };
  let h = opts.h;
  let dWide = central(2 * h);
  let dNarrow = central(h);
  let prev = (4 * dNarrow - dWide) / 3;
  let best: Omit<GradcheckEntry, "input" | "index"> | null = null;
  let bestRatio = Number.POSITIVE_INFINITY;
  for (let k = 0; k < HALVINGS; k++) {
    h /= 2;
    dWide = dNarrow;
    dNarrow = central(h);
    const numeric = (4 * dNarrow - dWide) / 3;
    const uncertainty = Math.abs(numeric - prev);
    prev = numeric;
    const allowed = opts.atol + opts.rtol * Math.abs(numeric);
    const ratio = (Math.abs(analytic - numeric) + uncertainty) / allowed;
    if (best === null || ratio < bestRatio) {
      best = { analytic, numeric, uncertainty, allowed };
      bestRatio = ratio;
    }
    if (ratio <= 1) break;
  }
  return best!;
}

/**
 * Check the gradient of `fn` at `inputs` (the tensors whose gradients are checked must have
 * requiresGrad = true). Throws naming the failing entries when any checked entry is outside
 * atol + rtol·|numeric|. Leaves each input's analytic gradient in `grad`.
 */
export function gradcheck(
  fn: () => Tensor | readonly Tensor[],
  inputs: readonly Tensor[],
  opts: GradcheckOptions = {},
): GradcheckResult {
  const steps = { h: opts.eps ?? 2 ** -6, atol: opts.atol ?? 1e-3, rtol: opts.rtol ?? 1e-3 };
  const maxPer = opts.maxPerInput ?? 128;
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
  let checked = 0;
  let worstRatio = 0;
  let worst: GradcheckEntry | null = null;
  const failures: GradcheckEntry[] = [];
  inputs.forEach((t, ti) => {
    const ana = t.grad ?? new Float32Array(t.size);
    for (const i of entriesToCheck(t.size, maxPer, rng)) {
      const entry = { input: ti, index: i, ...checkEntry(f, t, i, ana[i]!, steps) };
      const ratio = (Math.abs(entry.analytic - entry.numeric) + entry.uncertainty) / entry.allowed;
      checked++;
      // NaN on either side is a failure, never a pass.
      if (!(ratio <= 1)) failures.push(entry);
      if (!(ratio <= worstRatio)) {
        worstRatio = Number.isNaN(ratio) ? Number.POSITIVE_INFINITY : ratio;
        worst = entry;
      }
    }
  });
  if (failures.length > 0) {
    const shown = failures
      .slice(0, 5)
      .map(
        (e) =>
          `input ${e.input} entry ${e.index}: analytic ${e.analytic} vs numeric ${e.numeric} ± ${e.uncertainty.toExponential(2)} (|diff| ${Math.abs(e.analytic - e.numeric).toExponential(2)}, allowed ${e.allowed.toExponential(2)})`,
      );
    throw new Error(
      `gradcheck: ${failures.length} of ${checked} entries outside atol ${steps.atol} + rtol ${steps.rtol}·|numeric|:\n  ${shown.join("\n  ")}`,
    );
  }
  return { checked, worstRatio, worst };
}
