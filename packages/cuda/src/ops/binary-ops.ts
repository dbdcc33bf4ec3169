/*
 * `TensorOps.binary` (add, sub, mul; @loop/tensor's BinaryKind) and `affine` on the CUDA
 * backend. b has a's shape or a trailing part of it: one kernel reads b[i mod |b|]
 * (kernels/elementwise.cu `binary_bcast`), and b's gradient is summed over the leading axes by
 * `col_sum` (in a fixed order: the same bits every run), written straight into a trainable leaf's
 * gradient where b is one (a bias). affine is x·s + c with constants s, c.
 */
import type { BinaryKind } from "@loop/tensor";
import type { CudaContext } from "../context.js";
import type { CudaTensor } from "../cuda-tensor.js";
import { leafTarget, record } from "../tape.js";
import { expect } from "./shapes.js";

const CODE: Record<BinaryKind, number> = { add: 0, sub: 1, mul: 2 };

/** u ∘ v into a new tensor of u's shape, v repeated over u's leading axes. */
function apply(ctx: CudaContext, kind: BinaryKind, u: CudaTensor, v: CudaTensor): CudaTensor {
  const y = ctx.empty(u.shape);
  if (u.size > 0)
    ctx.run("binary_bcast", ctx.elems(u.size), [u.size, Math.max(1, v.size), CODE[kind], u, v, y]);
  return y;
}

/**
 * b's gradient from `gb` (of a's shape): gb itself as b's shape when b is not broadcast, else its
 * sum over the leading axes (into b's leaf gradient where b is a trainable leaf: null returned).
 */
function reduceToB(ctx: CudaContext, gb: CudaTensor, b: CudaTensor): CudaTensor | null {
  if (gb.size === b.size) return ctx.view(gb, b.shape);
  const target = leafTarget(ctx, b);
  const out = target?.out ?? ctx.empty(b.shape);
  if (b.size > 0)
    ctx.run("col_sum", ctx.elems(b.size, 128), [
      gb.size / b.size,
      b.size,
      gb,
      out,
      target?.acc ?? 0,
    ]);
  return target ? null : out;
}

/** a ∘ b (see the file comment). */
export function binary(
  ctx: CudaContext,
  kind: BinaryKind,
  a: CudaTensor,
  b: CudaTensor,
): CudaTensor {
  const tail = a.shape.slice(a.shape.length - b.shape.length);
  expect(CODE[kind] !== undefined, `binary: unknown kind "${kind}"`);
  expect(
    b.shape.length <= a.shape.length && tail.every((d, i) => d === b.shape[i]),
    `${kind}: shapes [${a.shape}] and [${b.shape}] do not broadcast (b must be a trailing part of a)`,
  );
  const y = apply(ctx, kind, a, b);
  record(ctx, kind, [a, b], [y], ([g]) => {
    let ga: CudaTensor | null = null;
    let gb: CudaTensor | null = null;
    if (kind === "mul") {
      if (a.requiresGrad) ga = apply(ctx, "mul", g!, b);
      if (b.requiresGrad) gb = reduceToB(ctx, apply(ctx, "mul", g!, a), b);
    } else {
      if (a.requiresGrad) ga = g!;
      if (b.requiresGrad) {
        let gy = g!;
        if (kind === "sub") {
          gy = ctx.empty(a.shape);
          ctx.axpy(-1, g!, 0, gy);
        }
        gb = reduceToB(ctx, gy, b);
      }
    }
    return [ga, gb];
  });
  return y;
}

/** x·s + c, elementwise. */
export function affine(ctx: CudaContext, x: CudaTensor, s: number, c: number): CudaTensor {
  const y = ctx.empty(x.shape);
  if (x.size > 0) ctx.run("affine_fwd", ctx.elems(x.size), [x.size, s, c, x, y]);
  record(ctx, "affine", [x], [y], ([g]) => {
    const gx = ctx.empty(x.shape);
    ctx.axpy(s, g!, 0, gx);
    return [gx];
  });
  return y;
}
