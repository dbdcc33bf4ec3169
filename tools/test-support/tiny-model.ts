/**
 * The tiny model the training and backend tests build: one Mamba-2 layer of width 16 applied
 * twice, small enough that a test trains it in seconds. A plain config object (for
 * `parseConfig` of `@loop/looped`, which this package does not import); `extra` overrides any
 * field.
 */
export function tinyModelConfig(vocabSize: number, extra: Record<string, unknown> = {}) {
  return {
    vocab_size: vocabSize,
    d_model: 16,
    n_layers: 1,
    n_loops: 2,
    backbone: "mamba",
    ssm: { d_state: 4, headdim: 8, chunk_size: 4 },
    ...extra,
  };
}
