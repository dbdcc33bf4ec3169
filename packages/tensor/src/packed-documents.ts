/*
 * Packed documents: several documents in one row of a batch, told apart by a document index per
 * position (mamba_ssm's `seq_idx`, [B,T] int32, non-decreasing along each row). Where the index
 * changes a document starts, and nothing may flow across that boundary: the causal conv1d does
 * not mix positions of different documents, the SSD scan drops the state carried into the first
 * position of a document, and attention masks the keys before a query's document start. A state
 * or conv history passed in before position 0 belongs to the row's first document. These helpers
 * turn seq_idx into what the kernels read (float32, their operand type).
 */

/**
 * [B·T] as float32 (the kernels' operand type): 1 at every position t > 0 where seqIdx changes,
 * else 0. Throws when the length is not B·T or an index decreases along a row.
 */
export function documentResets(seqIdx: Int32Array, batch: number, T: number): Float32Array {
  checkSeqIdx(seqIdx, batch, T);
  const r = new Float32Array(batch * T);
  for (let b = 0; b < batch; b++)
    for (let t = 1; t < T; t++) if (seqIdx[b * T + t] !== seqIdx[b * T + t - 1]) r[b * T + t] = 1;
  return r;
}

function checkSeqIdx(seqIdx: Int32Array, batch: number, T: number): void {
  if (seqIdx.length !== batch * T)
    throw new Error(`seqIdx must hold [${batch},${T}] = ${batch * T} values, got ${seqIdx.length}`);
  for (let b = 0; b < batch; b++) {
    for (let t = 1; t < T; t++) {
      const prev = seqIdx[b * T + t - 1]!;
      const cur = seqIdx[b * T + t]!;
      if (cur < prev)
        throw new Error(
          `seqIdx must not decrease along a row, got ${prev} then ${cur} at [${b},${t}]`,
        );
    }
  }
}

/** `[B·T]`: the first position (in its row) of each position's document. Throws as documentResets. */
export function documentStarts(seqIdx: Int32Array, batch: number, T: number): Float32Array {
  checkSeqIdx(seqIdx, batch, T);
  const s = new Float32Array(batch * T);
  for (let b = 0; b < batch; b++) {
    let start = 0;
    for (let t = 0; t < T; t++) {
      if (t > 0 && seqIdx[b * T + t] !== seqIdx[b * T + t - 1]) start = t;
      s[b * T + t] = start;
    }
  }
  return s;
}

/** An optional trailing argument of a native kernel: left out when null (calls unchanged). */
export function optionalArg(a: Float32Array | null): [] | [Float32Array] {
  return a ? [a] : [];
}
