/*
 * Shape checks shared by the gate ops. Per-step tensors come as one tensor per loop step r = 1..R
 * (readouts [..., D], logits [..., V]); gate quantities are stacked as [R, ...S] with S the token
 * shape (usually [B, T]). Errors name the argument and the expected vs actual shape.
 */
import { type Shape, shapeStr, sizeOf, type Tensor } from "@loop/tensor";

/** Check a non-empty list of equal-shape per-step tensors; returns their common shape. */
export function checkPerStep(xs: readonly Tensor[], arg: string, op: string): Shape {
  if (xs.length === 0) throw new Error(`${op}: ${arg} must hold at least one loop step, got 0`);
  const s = xs[0]!.shape;
  if (s.length < 1) throw new Error(`${op}: ${arg}[0] must have rank ≥ 1, got ${shapeStr(s)}`);
  xs.forEach((x, r) => {
    if (x.shape.length !== s.length || x.shape.some((d, i) => d !== s[i])) {
      throw new Error(
        `${op}: ${arg}[${r}] has shape ${shapeStr(x.shape)}, expected ${shapeStr(s)} like ${arg}[0]`,
      );
    }
  });
  return s;
}

/** Check that `x` has exactly `expected` shape. */
export function checkShape(x: { shape: Shape }, expected: Shape, arg: string, op: string): void {
  if (x.shape.length !== expected.length || x.shape.some((d, i) => d !== expected[i])) {
    throw new Error(`${op}: ${arg} has shape ${shapeStr(x.shape)}, expected ${shapeStr(expected)}`);
  }
}

/** Check a [R, ...S] gate tensor (R ≥ 1); returns R and the number of positions M = |S|. */
export function checkStepMajor(
  x: { shape: Shape },
  arg: string,
  op: string,
): { R: number; M: number; tokenShape: Shape } {
  if (x.shape.length < 1 || x.shape[0]! < 1) {
    throw new Error(`${op}: ${arg} must be [R, ...] with R ≥ 1, got ${shapeStr(x.shape)}`);
  }
  const tokenShape = x.shape.slice(1);
  return { R: x.shape[0]!, M: sizeOf(tokenShape), tokenShape };
}

/**
 * Check a stage objective's inputs: gate logits [R, ...S], per-step CE of the same shape and
 * targets [...S] (both stages read them alike); returns R and M = |S|.
 */
export function checkObjectiveInputs(
  gateLogits: { shape: Shape },
  ce: { shape: Shape },
  targets: { shape: Shape },
  op: string,
): { R: number; M: number } {
  const { R, M, tokenShape } = checkStepMajor(gateLogits, "gateLogits", op);
  checkShape(ce, gateLogits.shape, "ce", op);
  checkShape(targets, tokenShape, "targets", op);
  return { R, M };
}

/** Check a finite number argument. */
export function checkFinite(v: number, arg: string, op: string): void {
  if (!Number.isFinite(v)) throw new Error(`${op}: ${arg} must be a finite number, got ${v}`);
}
