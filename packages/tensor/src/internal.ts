/*
 * `@loop/tensor/internal`: helpers for this project's tests and benchmarks: random test
 * tensors (`randn`, `randu`), loading a reference weight into a parameter (`assignParameter`) and
 * the scratch pool's size (`scratchBytes`). Not the supported API: the main entry is.
 */
export { assignParameter } from "./module.js";
export { randn, randu } from "./random-tensor.js";
export { scratchBytes } from "./scratch.js";
