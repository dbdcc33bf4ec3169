/**
 * Learning-rate schedule: linear warmup from 0 to `peak` over `warmupSteps`, then cosine decay to
 * `minLr` at `totalSteps` (constant `minLr` after). Steps count from 0.
 *   lr(s) = peak·(s+1)/W                                   s < W
 *   lr(s) = min + (peak − min)·½(1 + cos(π·(s−W)/(S−W)))   W ≤ s < S
 */
export interface WarmupCosineOptions {
  peakLr: number;
  warmupSteps: number;
  totalSteps: number;
  minLr?: number;
}

/**
 * The warmup-cosine learning rate as a function of the step (from 0): linear warmup to `peakLr`,
 * cosine decay to `minLr` at `totalSteps`, constant after.
 */
export function warmupCosine(opts: WarmupCosineOptions): (step: number) => number {
  const { peakLr, warmupSteps, totalSteps } = opts;
  const minLr = opts.minLr ?? 0;
  if (!(peakLr > 0)) throw new Error(`warmupCosine: peakLr must be > 0, got ${peakLr}`);
  if (!Number.isInteger(warmupSteps) || warmupSteps < 0) {
    throw new Error(`warmupCosine: warmupSteps must be an integer ≥ 0, got ${warmupSteps}`);
  }
  if (!Number.isInteger(totalSteps) || totalSteps < 1) {
    throw new Error(`warmupCosine: totalSteps must be an integer ≥ 1, got ${totalSteps}`);
  }
  if (!(minLr >= 0 && minLr <= peakLr))
    throw new Error(`warmupCosine: minLr must be in [0, peakLr], got ${minLr}`);
  return (step: number) => {
    if (step < warmupSteps) return (peakLr * (step + 1)) / warmupSteps;
    const span = totalSteps - warmupSteps;
    if (span <= 0 || step >= totalSteps) return minLr;
    const f = (step - warmupSteps) / span;
    return minLr + (peakLr - minLr) * 0.5 * (1 + Math.cos(Math.PI * f));
  };
}
