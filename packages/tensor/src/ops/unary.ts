/**
 * Elementwise unary ops with exact, numerically stable forms:
 *   silu(x) = x·σ(x)                   silu' = σ(x)·(1 + x·(1 − σ(x)))
 *   softplus(x) = max(x,0) + log1p(e^{−|x|})   softplus' = σ(x)
 *   exp, sigmoid σ, logsigmoid(x) = −softplus(−x)   logsigmoid' = 1 − σ(x) = σ(−x)
 *   neg, log (x > 0)
 */
import { record1 } from "../autograd/node.js";
import { allocF32, type Tensor } from "../tensor.js";

export function sigmoidScalar(x: number): number {
  if (x >= 0) return 1 / (1 + Math.exp(-x));
  const e = Math.exp(x);
  return e / (1 + e);
}

export function softplusScalar(x: number): number {
  return Math.max(x, 0) + Math.log1p(Math.exp(-Math.abs(x)));
}

type Fwd = (x: number) => number;
/** Derivative from input x and output y. */
type Der = (x: number, y: number) => number;

function unary(op: string, x: Tensor, f: Fwd, d: Der): Tensor {
  const n = x.size;
  const xd = x.data;
  const y = allocF32(n);
  for (let i = 0; i < n; i++) y[i] = f(xd[i]!);
  return record1(op, [x], y, x.shape, ([g]) => {
    const gx = allocF32(n);
    for (let i = 0; i < n; i++) gx[i] = g![i]! * d(xd[i]!, y[i]!);
    return [gx];
  });
}

export const silu = (x: Tensor): Tensor =>
  unary(
    "silu",
    x,
    (v) => v * sigmoidScalar(v),
    (v) => {
      const s = sigmoidScalar(v);
      return s * (1 + v * (1 - s));
    },
  );

export const softplus = (x: Tensor): Tensor =>
  unary("softplus", x, softplusScalar, (v) => sigmoidScalar(v));

export const exp = (x: Tensor): Tensor => unary("exp", x, Math.exp, (_v, y) => y);

export const sigmoid = (x: Tensor): Tensor =>
  unary("sigmoid", x, sigmoidScalar, (_v, y) => y * (1 - y));

export const logsigmoid = (x: Tensor): Tensor =>
  unary(
    "logsigmoid",
    x,
    (v) => -softplusScalar(-v),
    (v) => sigmoidScalar(-v),
  );

export const neg = (x: Tensor): Tensor =>
  unary(
    "neg",
    x,
    (v) => -v,
    () => -1,
  );

export const log = (x: Tensor): Tensor => unary("log", x, Math.log, (v) => 1 / v);
