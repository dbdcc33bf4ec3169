/**
 * The tiny two-layer settings this package's model tests build every backbone from (a test adds
 * `backbone` and what that backbone needs): small enough to gradcheck, with two SSM groups and
 * two KV heads so grouping bugs show.
 */
export function tinyTwoLayers(nLoops: number) {
  return {
    vocab_size: 11,
    d_model: 16,
    n_layers: 2,
    n_loops: nLoops,
    ssm: { d_state: 4, headdim: 8, expand: 2, n_groups: 2, d_conv: 3, chunk_size: 4 },
    attention: { n_heads: 4, n_kv_heads: 2 },
  };
}
