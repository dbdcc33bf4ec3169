/**
 * The one signature every GEMM implementation has (reference, portable JS, WebAssembly SIMD,
 * thread-parallel, native C): C = alpha · op(A) · op(B) + beta · C, with row strides lda, ldb,
 * ldc and element offsets into each array; op(X) is Xᵀ when its trans flag is set.
 */
export type GemmFn = (
  transA: boolean,
  transB: boolean,
  M: number,
  N: number,
  K: number,
  alpha: number,
  A: Float32Array,
  aOff: number,
  lda: number,
  B: Float32Array,
  bOff: number,
  ldb: number,
  beta: number,
  C: Float32Array,
  cOff: number,
  ldc: number,
) => void;
