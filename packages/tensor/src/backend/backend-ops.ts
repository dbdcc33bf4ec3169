/*
 * Everything a compute backend provides (docs/architecture.md): the model's differentiable ops
 * and transfers (`ModelOps`) and the training step's tape, gradient and optimiser ops
 * (`TrainOps`), over its own tensor types T (float) and I (int).
 */
import type { ModelOps } from "./model-ops.js";
import type { TrainOps } from "./train-ops.js";

/**
 * Everything a backend implements: the model's ops and the training ops (tape, optimiser,
 * transfers).
 */
export type BackendOps<T, I> = ModelOps<T, I> & TrainOps<T, I>;
