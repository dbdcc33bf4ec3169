/*
 * Global-norm gradient clipping on the CPU: n = sqrt(Σ_p Σ_i g²); if n > maxNorm, every gradient
 * is scaled by maxNorm / (n + 1e-6). Returns n before clipping (NaN or Infinity when a gradient
 * is not finite; nothing is scaled then, so the caller can stop on it). The sums run in double;
 * `cpuTrainOps` (the CPU's clipping ops under `clipGradients`) uses the same two loops.
 */
import type { NamedParameter } from "../module.js";

/** sqrt(Σ g²) over `grads`, summed in double in order. */
export function normOfGrads(grads: readonly Float32Array[]): number {
  let s = 0;
  for (const g of grads) for (let i = 0; i < g.length; i++) s += g[i]! * g[i]!;
  return Math.sqrt(s);
}

/** Scale `grads` by maxNorm / (n + 1e-6) when the norm n is finite and above maxNorm. */
export function scaleGradsToNorm(grads: readonly Float32Array[], n: number, maxNorm: number): void {
  if (!Number.isFinite(n) || n <= maxNorm) return;
  const f = maxNorm / (n + 1e-6);
  for (const g of grads) for (let i = 0; i < g.length; i++) g[i]! *= f;
}

function gradsOf(params: readonly NamedParameter[]): Float32Array[] {
  const out: Float32Array[] = [];
  for (const p of params) if (p.tensor.grad && p.tensor.requiresGrad) out.push(p.tensor.grad);
  return out;
}

/** The global L2 norm of the parameters' gradients. */
export function gradNorm(params: readonly NamedParameter[]): number {
  return normOfGrads(gradsOf(params));
}

/**
 * Scale the gradients so their global L2 norm is at most `maxNorm`; returns the norm before
 * clipping.
 */
export function clipGradNorm(params: readonly NamedParameter[], maxNorm: number): number {
  if (!(maxNorm > 0)) throw new Error(`clipGradNorm: maxNorm must be > 0, got ${maxNorm}`);
  const grads = gradsOf(params);
  const n = normOfGrads(grads);
  scaleGradsToNorm(grads, n, maxNorm);
  return n;
}
