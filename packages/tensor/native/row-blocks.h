/*
 * Reductions over rows (weight and bias gradients) that never depend on the thread count: rows
 * are cut into blocks of loop_block_rows(rows) rows, each block is summed in double on one
 * thread into its own partial vector, and loop_sum_blocks adds the partials in block order —
 * the same bits for any number of threads.
 */
#ifndef LOOP_ROW_BLOCKS_H
#define LOOP_ROW_BLOCKS_H

/* rows per block: 64, or more when that would make over 256 blocks (bounds the partials'
 * memory); a function of the row count only */
static inline long loop_block_rows(long rows) {
  const long r = (rows + 255) / 256;
  return r > 64 ? r : 64;
}

/* Sum `nblk` partial vectors of length n (laid out one after the other) in block order into the
 * first one. */
static inline void loop_sum_blocks(double *part, long nblk, long n) {
  for (long b = 1; b < nblk; b++) {
    const double *restrict p = part + b * n;
    double *restrict t = part;
    for (long j = 0; j < n; j++) t[j] += p[j];
  }
}

/* loop_sum_blocks, then the total rounded once to float32 into out[0..n) (the gradient the
 * partials add up to). */
static inline void loop_sum_blocks_f32(float *restrict out, double *part, long nblk, long n) {
  loop_sum_blocks(part, nblk, n);
  for (long j = 0; j < n; j++) out[j] = (float)part[j];
}

#endif
