/*
 * Elementwise unary ops with exact, numerically stable forms:
 *   silu(x) = x·σ(x)                   silu' = σ(x)·(1 + x·(1 − σ(x)))
 *   softplus(x) = max(x,0) + log1p(e^{−|x|})   softplus' = σ(x)
 *   exp, sigmoid σ, logsigmoid(x) = −softplus(−x)   logsigmoid' = 1 − σ(x) = σ(−x)
 *   neg, log (x > 0)
 * σ is evaluated as 1/(1+e^{−x}) or e^x/(1+e^x), so the exponent is never positive and the fast
 * e^{x≤0} of fast-exp.ts applies. Each op has its own loops (a shared loop calling the formula
 * through a function argument keeps V8 from inlining it).
 */
import { isGradEnabled, record1 } from "../autograd/node.js";
import { allocF32, allocF32Uninit, Tensor } from "../tensor.js";
import { siluBackward, siluForward } from "./elementwise-kernels.js";
import { fastExp } from "./fast-exp.js";

/** The logistic function 1 / (1 + e^−x) of a number, accurate in both tails. */
export function sigmoidScalar(x: number): number {
  const e = fastExp(-Math.abs(x));
  return (x >= 0 ? 1 : e) / (1 + e); // e/(1+e), not 1 − σ(|x|): keeps the tail's precision
}

/** log(1 + e^x) of a number, without overflow. */
export function softplusScalar(x: number): number {
  return Math.max(x, 0) + Math.log1p(fastExp(-Math.abs(x)));
}

/** Record an elementwise op whose backward is gx[i] = g[i]·d(i) for a derivative table d. */
function record(
  op: string,
  x: Tensor,
  y: Float32Array,
  deriv: (gx: Float32Array, g: Float32Array) => void,
): Tensor {
  return record1(op, [x], y, x.shape, ([g]) => {
    const gx = allocF32Uninit(x.size); // deriv writes every element
    deriv(gx, g!);
    return [gx];
  });
}

/**
 * silu; σ(x) is kept for the backward when recording (a load there instead of exp + divide).
 * Both passes run on the thread pool when one is running (elementwise-kernels.ts).
 */
export function silu(x: Tensor): Tensor {
  const n = x.size;
  const y = allocF32Uninit(n);
  if (!(isGradEnabled() && x.requiresGrad)) {
    siluForward(x.data, y, null);
    return new Tensor(y, x.shape);
  }
  const sig = allocF32Uninit(n);
  siluForward(x.data, y, sig);
  return record("silu", x, y, (gx, g) => siluBackward(x.data, sig, g, gx));
}

/** softplus(x) = log(1 + e^x), elementwise; differentiable. */
export function softplus(x: Tensor): Tensor {
  const n = x.size;
  const xd = x.data;
  const y = allocF32(n);
  for (let i = 0; i < n; i++) y[i] = softplusScalar(xd[i]!);
  return record("softplus", x, y, (gx, g) => {
    for (let i = 0; i < n; i++) gx[i] = g[i]! * sigmoidScalar(xd[i]!);
  });
}

/** e^x, elementwise; differentiable. */
export function exp(x: Tensor): Tensor {
  const n = x.size;
  const xd = x.data;
  const y = allocF32(n);
  for (let i = 0; i < n; i++) y[i] = Math.exp(xd[i]!);
  return record("exp", x, y, (gx, g) => {
    for (let i = 0; i < n; i++) gx[i] = g[i]! * y[i]!;
  });
}

/** The logistic sigmoid, elementwise; differentiable. */
export function sigmoid(x: Tensor): Tensor {
  const n = x.size;
  const xd = x.data;
  const y = allocF32(n);
  for (let i = 0; i < n; i++) y[i] = sigmoidScalar(xd[i]!);
  return record("sigmoid", x, y, (gx, g) => {
    for (let i = 0; i < n; i++) gx[i] = g[i]! * y[i]! * (1 - y[i]!);
  });
}

/** log sigmoid(x) = −softplus(−x), elementwise, stable for large |x|; differentiable. */
export function logsigmoid(x: Tensor): Tensor {
  const n = x.size;
  const xd = x.data;
  const y = allocF32(n);
  for (let i = 0; i < n; i++) y[i] = -softplusScalar(-xd[i]!);
  return record("logsigmoid", x, y, (gx, g) => {
    for (let i = 0; i < n; i++) gx[i] = g[i]! * sigmoidScalar(-xd[i]!);
  });
}

/** −x, elementwise; differentiable. */
export function neg(x: Tensor): Tensor {
  const n = x.size;
  const xd = x.data;
  const y = allocF32(n);
  for (let i = 0; i < n; i++) y[i] = -xd[i]!;
  return record("neg", x, y, (gx, g) => {
    for (let i = 0; i < n; i++) gx[i] = -g[i]!;
  });
}

/** The natural logarithm, elementwise; differentiable. */
export function log(x: Tensor): Tensor {
  const n = x.size;
  const xd = x.data;
  const y = allocF32(n);
  for (let i = 0; i < n; i++) y[i] = Math.log(xd[i]!);
  return record("log", x, y, (gx, g) => {
    for (let i = 0; i < n; i++) gx[i] = g[i]! / xd[i]!;
  });
}

/** max(x, 0), elementwise; gradient 0 where x ≤ 0; differentiable. */
export function relu(x: Tensor): Tensor {
  const n = x.size;
  const xd = x.data;
  const y = allocF32(n);
  for (let i = 0; i < n; i++) y[i] = Math.max(xd[i]!, 0);
  return record("relu", x, y, (gx, g) => {
    for (let i = 0; i < n; i++) gx[i] = xd[i]! > 0 ? g[i]! : 0;
  });
}
