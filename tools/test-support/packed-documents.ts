/**
 * Packed-document tests compare a row holding several documents with each document run alone:
 * this cuts one document out of a batch. (Any tensor class with @loop/tensor's constructor: the
 * helpers depend on no workspace package, README.md.)
 */

interface RowMajor {
  readonly data: Float32Array;
  readonly shape: readonly number[];
  readonly size: number;
}

/** Positions t0..t1 of row b of a [B,T,...] tensor as a fresh [1,len,...] leaf of x's class. */
export function documentSlice<T extends RowMajor>(x: T, b: number, t0: number, t1: number): T {
  const Leaf = x.constructor as new (data: Float32Array, shape: number[], grad: boolean) => T;
  const inner = x.size / (x.shape[0]! * x.shape[1]!);
  const off = (b * x.shape[1]! + t0) * inner;
  return new Leaf(
    x.data.slice(off, off + (t1 - t0) * inner),
    [1, t1 - t0, ...x.shape.slice(2)],
    true,
  );
}
