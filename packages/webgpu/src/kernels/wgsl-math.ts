/**
 * WGSL scalar helpers shared by the kernels, written for float32 accuracy in the tails:
 *   sigmoid(x) = 1/(1+e^−x) from e^−|x| (no cancellation for x ≪ 0)
 *   log1p(u)   accurate for small u (Goldberg's correction: log(w)·u/(w−1), w = 1+u)
 *   softplus(x) = max(x,0) + log1p(e^−|x|)      logsigmoid(x) = −softplus(−x)   silu(x) = x·σ(x)
 *   siluGrad(x) = σ(x)·(1 + x·(1 − σ(x)))
 */
export const WGSL_MATH = `
fn sigmoid(x: f32) -> f32 {
  let e = exp(-abs(x));
  return select(e, 1.0, x >= 0.0) / (1.0 + e);
}
fn log1p(u: f32) -> f32 {
  let w = 1.0 + u;
  if (w == 1.0) { return u; }
  return log(w) * u / (w - 1.0);
}
fn softplus(x: f32) -> f32 { return max(x, 0.0) + log1p(exp(-abs(x))); }
fn logsigmoid(x: f32) -> f32 { return -softplus(-x); }
fn silu(x: f32) -> f32 { return x * sigmoid(x); }
fn siluGrad(x: f32) -> f32 {
  let s = sigmoid(x);
  return s * (1.0 + x * (1.0 - s));
}
`;
