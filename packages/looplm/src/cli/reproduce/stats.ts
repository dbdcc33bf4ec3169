/* Mean and sample standard deviation over seeds (the table cells of `looplm reproduce`). */

export interface MeanSd {
  mean: number;
  /** Sample standard deviation (n − 1 in the denominator); 0 for a single value. */
  sd: number;
  n: number;
}

/** "1 seed", "5 seeds". */
export const seedCount = (n: number): string => `${n} seed${n === 1 ? "" : "s"}`;

export function meanSd(values: readonly number[]): MeanSd {
  const n = values.length;
  if (n === 0) throw new Error("meanSd: no values");
  if (values.some((v) => !Number.isFinite(v)))
    throw new Error(`meanSd: values must be finite, got ${values.join(", ")}`);
  const mean = values.reduce((a, b) => a + b, 0) / n;
  if (n === 1) return { mean, sd: 0, n };
  const ss = values.reduce((a, v) => a + (v - mean) * (v - mean), 0);
  return { mean, sd: Math.sqrt(ss / (n - 1)), n };
}

/** "81.05 ± 1.20 %" (accuracy in [0, 1]) or "23.41 ± 0.32" (perplexity). */
export function formatMeanSd(m: MeanSd, metric: "accuracy" | "ppl"): string {
  if (metric === "accuracy") return `${(100 * m.mean).toFixed(2)} ± ${(100 * m.sd).toFixed(2)} %`;
  return `${m.mean.toFixed(2)} ± ${m.sd.toFixed(2)}`;
}
