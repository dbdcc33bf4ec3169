/*
 * `@loop/looped/internal`: per-layer FLOP terms of docs/model.md §7 for this project's
 * benchmarks, and the whole-model cases the device model is tested on (here, by `looplm check`
 * and by looplm's WebGPU suite). Not the supported API: `flopsPerToken` on the main entry is.
 */
export { attentionLayerFlops, mambaLayerFlops } from "./accounting.js";
export { MODEL_CASE_VOCAB, MODEL_CASES, modelCaseData } from "./device-model-cases.js";
