/**
 * Test support: Pearson's chi-square statistic and an upper critical value from the
 * Wilson–Hilferty approximation (χ²_k ≈ k·(1 − 2/(9k) + z·√(2/(9k)))³). With the seeds fixed
 * the tests are deterministic; the bound only documents how unlikely a failure would be for a
 * correct sampler (z = 4.75 ≈ one in a million).
 */
export function chiSquare(observed: readonly number[], expected: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < observed.length; i++) {
    const e = expected[i]!;
    s += (observed[i]! - e) ** 2 / e;
  }
  return s;
}

export function chiSquareCritical(df: number, z = 4.75): number {
  const a = 2 / (9 * df);
  return df * (1 - a + z * Math.sqrt(a)) ** 3;
}

/** Chi-square of counts against a uniform distribution over the same categories. */
export function chiSquareUniform(counts: readonly number[]): { stat: number; critical: number } {
  const n = counts.reduce((a, b) => a + b, 0);
  const e = counts.map(() => n / counts.length);
  return { stat: chiSquare(counts, e), critical: chiSquareCritical(counts.length - 1) };
}
