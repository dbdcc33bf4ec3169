/*
 * Weight initialisation shared by the modules of this package (docs/model.md §3): weights uniform
 * ±1/sqrt(fan_in); output projections additionally divided by sqrt(nLayers), one residual each.
 */
import { parameter, type Rng, type Tensor } from "@loop/tensor";
import { allocF32 } from "@loop/tensor/kernel";

/**
 * How a module initialises its weights: the seeded stream and the residual depth that scales output
 * projections.
 */
export interface ModuleInit {
  /** Seeded stream for the initial weights (default new Rng(0)). */
  rng?: Rng;
  /** Layers in the residual stack: output projections are divided by sqrt(nLayers). */
  nLayers?: number;
}

export function positiveInt(value: number, name: string): void {
  if (!Number.isInteger(value) || value <= 0) {
    throw new Error(`${name} must be a positive integer, got ${value}`);
  }
}

/** A [rows, cols] weight, uniform ±bound, drawn from `rng.child(name)`. */
export function uniformWeight(
  rng: Rng,
  name: string,
  rows: number,
  cols: number,
  bound: number,
): Tensor {
  const data = allocF32(rows * cols);
  rng.child(name).fillUniform(data, -bound, bound);
  return parameter(data, [rows, cols], name);
}

/** 1/sqrt(nLayers) (default nLayers 1). */
export function residualScale(nLayers: number | undefined): number {
  const n = nLayers ?? 1;
  positiveInt(n, "nLayers");
  return 1 / Math.sqrt(n);
}
