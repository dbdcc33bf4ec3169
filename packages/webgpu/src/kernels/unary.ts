/**
 * Elementwise unary kernels with the CPU ops' stable forms (@loop/tensor ops/unary.ts):
 *   exp: y = e^x, ∂ = g·y            neg: y = −x, ∂ = −g           log: y = ln x, ∂ = g/x
 *   sigmoid: y = σ(x), ∂ = g·y(1 − y)
 *   logsigmoid: y = −softplus(−x), ∂ = g·σ(−x)
 *   silu: y = x·σ(x), ∂ = g·σ(1 + x(1 − σ))
 *   softplus: y = max(x, 0) + log1p(e^{−|x|}), ∂ = g·σ(x)
 * σ(x) = (x ≥ 0 ? 1 : e)/(1 + e), e = e^{−|x|}: the exponent is never positive. Flat grids of
 * n elements; backward kernels read x, the forward output y and g (all three, whether the
 * formula needs them or not: an automatic bind-group layout drops bindings a shader never uses).
 */
import { defineKernel, flatIndex, type Kernel } from "../kernel-def.js";

export const UNARY_GROUP = 256;

/** WGSL helpers shared by kernels that need a stable σ, softplus or silu. */
export const STABLE_WGSL = `
fn sigmoidStable(x: f32) -> f32 {
  let e = exp(-abs(x));
  return select(e, 1.0, x >= 0.0) / (1.0 + e);
}
fn log1pSmall(e: f32) -> f32 {
  // log(1 + e) without the cancellation of 1 + e for small e (Kahan's correction).
  let u = 1.0 + e;
  if (u == 1.0) { return e; }
  return log(u) * e / (u - 1.0);
}
fn softplusStable(x: f32) -> f32 {
  return max(x, 0.0) + log1pSmall(exp(-abs(x)));
}
fn siluGrad(x: f32) -> f32 {
  let s = sigmoidStable(x);
  return s * (1.0 + x * (1.0 - s));
}`;

export type UnaryName = "exp" | "neg" | "log" | "sigmoid" | "logsigmoid" | "silu" | "softplus";

/** Forward y(x) and backward gx(x, y, g) expressions. */
const FORMULAS: Record<UnaryName, [string, string]> = {
  exp: ["exp(x)", "g * y"],
  neg: ["-x", "-g"],
  log: ["log(x)", "g / x"],
  sigmoid: ["sigmoidStable(x)", "g * y * (1.0 - y)"],
  logsigmoid: ["-softplusStable(-x)", "g * sigmoidStable(-x)"],
  silu: ["x * sigmoidStable(x)", "g * siluGrad(x)"],
  softplus: ["softplusStable(x)", "g * sigmoidStable(x)"],
};

const head = `@compute @workgroup_size(${UNARY_GROUP})
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) ng: vec3u) {
  let i = ${flatIndex(UNARY_GROUP)};
  if (i >= p.n) { return; }`;

const kernels = new Map<string, Kernel>();

export function unaryKernel(op: UnaryName, pass: "forward" | "backward"): Kernel {
  const key = `${op}_${pass}`;
  let k = kernels.get(key);
  if (k) return k;
  const [fwd, bwd] = FORMULAS[op];
  k =
    pass === "forward"
      ? defineKernel({
          name: key,
          params: { n: "u32" },
          buffers: { a: "read", out: "rw" },
          body: `${STABLE_WGSL}\n${head}\n  let x = a[i];\n  out[i] = ${fwd};\n}`,
        })
      : defineKernel({
          name: key,
          params: { n: "u32" },
          buffers: { a: "read", yb: "read", gb: "read", out: "rw" },
          body: `${STABLE_WGSL}\n${head}\n  let x = a[i];\n  let y = yb[i];\n  let g = gb[i];\n  out[i] = ${bwd};\n}`,
        });
  kernels.set(key, k);
  return k;
}
