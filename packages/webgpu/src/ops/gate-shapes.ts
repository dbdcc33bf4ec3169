/*
 * Shape checks of the GPU exit-gate ops (as @loop/exit-gate's shapes.ts): per-step tensors come
 * as one tensor per loop step, gate quantities are step-major [R, ...S]. Errors name the op, the
 * argument and the expected vs actual shape.
 */
import type { GpuTensor } from "../gpu-tensor.js";

type Shape = readonly number[];
const str = (s: Shape) => `[${s.join(",")}]`;

/** A non-empty list of equal-shape tensors of rank ≥ 1; returns the common shape. */
export function checkPerStep(xs: readonly GpuTensor[], arg: string, op: string): Shape {
  if (xs.length === 0) throw new Error(`${op}: ${arg} must hold at least one loop step, got 0`);
  const s = xs[0]!.shape;
  if (s.length < 1) throw new Error(`${op}: ${arg}[0] must have rank ≥ 1, got ${str(s)}`);
  xs.forEach((x, r) => {
    if (x.shape.length !== s.length || x.shape.some((d, i) => d !== s[i]))
      throw new Error(
        `${op}: ${arg}[${r}] has shape ${str(x.shape)}, expected ${str(s)} like ${arg}[0]`,
      );
  });
  return s;
}

export function checkShape(x: GpuTensor, expected: Shape, arg: string, op: string): void {
  if (x.shape.length !== expected.length || x.shape.some((d, i) => d !== expected[i]))
    throw new Error(`${op}: ${arg} has shape ${str(x.shape)}, expected ${str(expected)}`);
}

/** A [R, ...S] gate tensor (R ≥ 1): R, the number of positions M and S. */
export function checkStepMajor(x: GpuTensor, arg: string, op: string) {
  if (x.shape.length < 1 || x.shape[0]! < 1)
    throw new Error(`${op}: ${arg} must be [R, ...] with R ≥ 1, got ${str(x.shape)}`);
  const R = x.shape[0]!;
  return { R, M: x.size / R, tokenShape: x.shape.slice(1) };
}

/** Targets: an i32 tensor with the token shape S. */
export function checkTargets(targets: GpuTensor, tokenShape: Shape, op: string): void {
  if (targets.dtype !== "i32") throw new Error(`${op}: targets must be an i32 tensor`);
  checkShape(targets, tokenShape, "targets", op);
}

export function checkFinite(v: number, arg: string, op: string): void {
  if (!Number.isFinite(v)) throw new Error(`${op}: ${arg} must be a finite number, got ${v}`);
}
