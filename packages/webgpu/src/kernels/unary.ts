/*
 * Elementwise unary kernels with the CPU ops' stable forms (@loop/tensor ops/unary.ts):
 *   exp: y = e^x, ∂ = g·y            neg: y = −x, ∂ = −g           log: y = ln x, ∂ = g/x
 *   negExp: y = −e^x, ∂ = g·y
 *   sigmoid: y = σ(x), ∂ = g·y(1 − y)
 *   logsigmoid: y = −softplus(−x), ∂ = g·σ(−x)
 *   relu: y = max(x, 0), ∂ = g where x > 0, else 0 (the CPU's choice at x = 0)
 *   silu: y = x·σ(x), ∂ = g·σ(1 + x(1 − σ))
 *   softplus: y = max(x, 0) + log1p(e^{−|x|}), ∂ = g·σ(x)
 * σ(x) = (x ≥ 0 ? 1 : e)/(1 + e), e = e^{−|x|}: the exponent is never positive (wgsl-math.ts). Flat grids of
 * n elements; backward kernels read x, the forward output y and g (all three, whether the
 * formula needs them or not: an automatic bind-group layout drops bindings a shader never uses),
 * g possibly as partial sums (kernels/wgsl-partial-sum.ts).
 */
import { defineKernel, flatEntry, type Kernel } from "../kernel-def.js";
import { getOrMake } from "../memo.js";
import { WGSL_MATH } from "./wgsl-math.js";
import { partialSumParams, partialSumWgsl } from "./wgsl-partial-sum.js";

export const UNARY_GROUP = 256;

export type UnaryName =
  | "exp"
  | "neg"
  | "negExp"
  | "log"
  | "sigmoid"
  | "logsigmoid"
  | "relu"
  | "silu"
  | "softplus";

/** Forward y(x) and backward gx(x, y, g) expressions. */
const FORMULAS: Record<UnaryName, [string, string]> = {
  exp: ["exp(x)", "g * y"],
  neg: ["-x", "-g"],
  // −exp(x) in one op: the bits of neg(exp(x)) both ways (−(g·e) = g·(−e) exactly)
  negExp: ["-exp(x)", "g * y"],
  log: ["log(x)", "g / x"],
  sigmoid: ["sigmoid(x)", "g * y * (1.0 - y)"],
  logsigmoid: ["-softplus(-x)", "g * sigmoid(-x)"],
  relu: ["max(x, 0.0)", "select(0.0, g, x > 0.0)"],
  silu: ["x * sigmoid(x)", "g * siluGrad(x)"],
  softplus: ["softplus(x)", "g * sigmoid(x)"],
};

const head = flatEntry(UNARY_GROUP);

const kernels = new Map<string, Kernel>();

export function unaryKernel(op: UnaryName, pass: "forward" | "backward"): Kernel {
  const key = `${op}_${pass}`;
  return getOrMake(kernels, key, () => {
    const [fwd, bwd] = FORMULAS[op];
    return pass === "forward"
      ? defineKernel({
          name: key,
          params: { n: "u32" },
          buffers: { a: "read", out: "rw" },
          body: `${WGSL_MATH}\n${head}\n  let x = a[i];\n  out[i] = ${fwd};\n}`,
        })
      : defineKernel({
          name: key,
          params: { n: "u32", acc: "u32", ...partialSumParams("gb") },
          buffers: { a: "read", yb: "read", gb: "read", out: "rw" },
          // acc: add into out (a gradient's running sum) instead of storing; g may still be
          // partial sums (a column sum's row blocks: ∂A of the SSD scan before −exp's backward)
          body: `${WGSL_MATH}\n${partialSumWgsl("gAt", "gb")}\n${head}\n  let x = a[i];\n  let y = yb[i];\n  let g = gAt(i);\n  let v = ${bwd};\n  if (p.acc != 0u) { out[i] = out[i] + v; } else { out[i] = v; }\n}`,
        });
  });
}
