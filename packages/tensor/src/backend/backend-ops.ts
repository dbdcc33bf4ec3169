/*
 * Everything a compute backend provides (docs/architecture.md): the model's differentiable ops
 * and transfers (`ModelOps`) and the training step's tape, gradient and optimiser ops
 * (`TrainOps`), over its own tensor types T (float) and I (int).
 */
import type { ModelOps } from "./model-ops.js";
import type { TrainOps } from "./train-ops.js";

export type BackendOps<T, I> = ModelOps<T, I> & TrainOps<T, I>;
