/*
 * The small module convention every model part follows: a module owns named parameter tensors
 * (names as in docs/model.md §6, relative to the module) and says which are exempt from weight decay.
 * Loading weights copies into the existing tensors, so graphs keep pointing at the same leaves.
 */
import { shapeStr, type Tensor } from "./tensor.js";

/**
 * A model parameter with its docs/model.md §6 name, weight-decay flag and optional learning-rate
 * scale.
 */
export interface NamedParameter {
  name: string;
  tensor: Tensor;
  /** False for dt_bias, A_log, D, norm weights and biases (docs/model.md §3). */
  decay: boolean;
  /** Multiplies the optimizer's learning rate for this parameter (absent: 1). */
  lrScale?: number;
}

/** Anything with parameters: a model, a layer, a mixer. */
export interface Module {
  parameters(): NamedParameter[];
}

/** Prefix every parameter name of `m` with `prefix.`. */
export function prefixed(prefix: string, params: readonly NamedParameter[]): NamedParameter[] {
  return params.map((p) => ({ ...p, name: `${prefix}.${p.name}` }));
}

/**
 * `module`'s parameters by name (docs/model.md §6, relative to the module), for the forwards
 * written against `ModelOps`. The map is built on the first call: loading copies into the same
 * tensors (assignParameter), so it stays valid.
 */
export function weightLookup(module: Module, owner: string): (name: string) => Tensor {
  let byName: Map<string, Tensor> | null = null;
  return (name) => {
    byName ??= new Map(module.parameters().map((p) => [p.name, p.tensor]));
    const t = byName.get(name);
    if (!t) throw new Error(`${owner}: no parameter named ${name}`);
    return t;
  };
}

/** Copy `data` into `t`, checking the shape. */
export function assignParameter(
  t: Tensor,
  data: Float32Array,
  shape: readonly number[],
  name: string,
): void {
  if (shape.length !== t.shape.length || shape.some((d, i) => d !== t.shape[i])) {
    throw new Error(`${name}: expected shape ${shapeStr(t.shape)}, got ${shapeStr(shape)}`);
  }
  t.data.set(data);
}
