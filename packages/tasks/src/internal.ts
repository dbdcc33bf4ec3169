/*
 * `@loop/tasks/internal`: the BPE trainer's two halves (pre-token counting, merges from
 * counts) for this project's benchmarks. Not the supported API: `trainBpe` on the main entry is.
 */
export { countPreTokens, trainBpeFromCounts } from "./lm/bpe-trainer.js";
