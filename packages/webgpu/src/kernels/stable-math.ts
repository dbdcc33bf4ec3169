/**
 * WGSL helpers shared by the attention and exit-gate kernels, written to stay finite for any
 * input (WGSL has no infinities to lean on and no log1p):
 *   sigmoid(x)    = 1/(1+e^−x) for x ≥ 0, e^x/(1+e^x) otherwise (no overflow either way)
 *   log1pSmall(z) = ln(1+z) for z ∈ [0, 1], with the series z − z²/2 + z³/3 where 1+z rounds
 *   softplus(x)   = max(x, 0) + ln(1 + e^−|x|)        logsigmoid(x) = −softplus(−x)
 */
export const STABLE_MATH = /* wgsl */ `
fn sigmoid(x: f32) -> f32 {
  if (x >= 0.0) { return 1.0 / (1.0 + exp(-x)); }
  let e = exp(x);
  return e / (1.0 + e);
}
fn log1pSmall(z: f32) -> f32 {
  if (z < 1e-3) { return z * (1.0 - z * (0.5 - z / 3.0)); }
  return log(1.0 + z);
}
fn softplus(x: f32) -> f32 {
  return max(x, 0.0) + log1pSmall(exp(-abs(x)));
}
fn logsigmoid(x: f32) -> f32 {
  return -softplus(-x);
}
`;
