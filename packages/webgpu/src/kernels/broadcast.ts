/*
 * Kernels over NumPy-style broadcasts, on shapes collapsed to at most MAX_DIMS axes
 * (ops/broadcast.ts merges neighbouring axes that broadcast alike):
 *   binary:  y[i] = f(a[ia(i)], b[ib(i)]), i over the output [d0…d5], ia/ib the operands' flat
 *            indices (stride 0 on the axes they broadcast); f one of
 *            add a+b, sub a−b, mul a·b, div a/b, negmul −a·b, expand alpha·a (b unused)
 *   reduce:  out[e·] = alpha · Σ_t g[idx(e, t)]: sums a tensor laid out as the output back onto
 *            an operand that was broadcast; e runs over the operand's elements (the kept axes),
 *            t over the broadcast axes in increasing order. Long sums are split into chunks of
 *            REDUCE_CHUNK terms written as partials [chunks, n] and summed again, so the order is
 *            fixed (deterministic) and every thread's loop is short.
 */
import { defineKernel, flatEntry, type Kernel } from "../kernel-def.js";
import { getOrMake } from "../memo.js";

export const MAX_DIMS = 6;
export const BCAST_GROUP = 256;
export const REDUCE_CHUNK = 64;

export type BinaryFn = "add" | "sub" | "mul" | "div" | "negmul" | "expand";
const FORMULA: Record<BinaryFn, string> = {
  add: "x + z",
  sub: "x - z",
  mul: "x * z",
  div: "x / z",
  negmul: "-(x * z)",
  expand: "p.alpha * x",
};

const dimParams = (prefix: string) =>
  Object.fromEntries(Array.from({ length: MAX_DIMS }, (_, k) => [`${prefix}${k}`, "u32" as const]));

const binaryKernels = new Map<BinaryFn, Kernel>();

export function binaryKernel(fn: BinaryFn): Kernel {
  return getOrMake(binaryKernels, fn, () => {
    // Axis k of the output: digit = rest % d_k (last axis first); each operand adds digit·stride.
    const decode = Array.from({ length: MAX_DIMS }, (_, j) => MAX_DIMS - 1 - j)
      .map(
        (ax) =>
          `  { let d = rest % p.d${ax}; rest = rest / p.d${ax}; ia += d * p.as${ax}; ib += d * p.bs${ax}; }`,
      )
      .join("\n");
    return defineKernel({
      name: `broadcast_${fn}`,
      params: { n: "u32", alpha: "f32", ...dimParams("d"), ...dimParams("as"), ...dimParams("bs") },
      buffers: { a: "read", b: "read", out: "rw" },
      body: `
${flatEntry(BCAST_GROUP)}
  var rest = i;
  var ia = 0u;
  var ib = 0u;
${decode}
  let x = a[ia];
  let z = b[ib]; // read by every variant: the automatic layout keeps only bindings in use
  out[i] = ${FORMULA[fn]};
}`,
    });
  });
}

/**
 * One reduction stage: n kept elements × `chunks` chunks of the cnt broadcast terms. Axis k is a
 * broadcast axis when bit k of `bmask` is set. `square` squares each term (sums of squares).
 */
export const reduceKernel = defineKernel({
  name: "broadcast_reduce",
  params: {
    n: "u32",
    cnt: "u32",
    chunks: "u32",
    bmask: "u32",
    square: "u32",
    alpha: "f32",
    ...dimParams("d"),
  },
  buffers: { g: "read", out: "rw" },
  body: `
fn termIndex(e0: u32, t0: u32) -> u32 {
  var e = e0;
  var t = t0;
  var idx = 0u;
  var stride = 1u;
  var dims = array<u32, ${MAX_DIMS}>(${Array.from({ length: MAX_DIMS }, (_, k) => `p.d${k}`).join(", ")});
  for (var j = 0; j < ${MAX_DIMS}; j++) {
    let ax = ${MAX_DIMS - 1} - j;
    let d = dims[ax];
    var digit: u32;
    if (((p.bmask >> u32(ax)) & 1u) != 0u) { digit = t % d; t = t / d; }
    else { digit = e % d; e = e / d; }
    idx += digit * stride;
    stride *= d;
  }
  return idx;
}

${flatEntry(BCAST_GROUP, "p.n * p.chunks", "f")}
  let e = f % p.n;
  let c = f / p.n;
  let t0 = c * ${REDUCE_CHUNK}u;
  let t1 = min(t0 + ${REDUCE_CHUNK}u, p.cnt);
  var s = 0.0;
  for (var t = t0; t < t1; t++) {
    let v = g[termIndex(e, t)];
    if (p.square != 0u) { s += v * v; } else { s += v; }
  }
  out[c * p.n + e] = p.alpha * s;
}`,
});
