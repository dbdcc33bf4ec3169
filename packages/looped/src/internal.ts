/*
 * `@loop/looped/internal`: per-layer FLOP terms of docs/model.md §7 for this project's
 * benchmarks. Not the supported API: `flopsPerToken` on the main entry is.
 */
export { attentionLayerFlops, mambaLayerFlops } from "./accounting.js";
