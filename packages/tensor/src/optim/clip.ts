/**
 * Global-norm gradient clipping: n = sqrt(Σ_p Σ_i g²); if n > maxNorm, every gradient is scaled by
 * maxNorm / n. Returns n before clipping (NaN or Infinity when a gradient is not finite; nothing
 * is scaled then, so the caller can stop on it).
 */
import type { NamedParameter } from "../module.js";

export function gradNorm(params: readonly NamedParameter[]): number {
  let s = 0;
  for (const p of params) {
    const g = p.tensor.grad;
    if (!g || !p.tensor.requiresGrad) continue;
    for (let i = 0; i < g.length; i++) s += g[i]! * g[i]!;
  }
  return Math.sqrt(s);
}

export function clipGradNorm(params: readonly NamedParameter[], maxNorm: number): number {
  if (!(maxNorm > 0)) throw new Error(`clipGradNorm: maxNorm must be > 0, got ${maxNorm}`);
  const n = gradNorm(params);
  if (!Number.isFinite(n) || n <= maxNorm) return n;
  const f = maxNorm / (n + 1e-6);
  for (const p of params) {
    const g = p.tensor.grad;
    if (!g || !p.tensor.requiresGrad) continue;
    for (let i = 0; i < g.length; i++) g[i]! *= f;
  }
  return n;
}
