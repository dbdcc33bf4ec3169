/**
 * Packed-document tests compare a row holding several documents with each document run alone:
 * this cuts one document out of a batch.
 */
import { Tensor } from "@loop/tensor";

/** Positions t0..t1 of row b of a [B,T,...] tensor as a fresh [1,len,...] leaf. */
export function documentSlice(x: Tensor, b: number, t0: number, t1: number): Tensor {
  const inner = x.size / (x.shape[0]! * x.shape[1]!);
  const off = (b * x.shape[1]! + t0) * inner;
  return new Tensor(
    x.data.slice(off, off + (t1 - t0) * inner),
    [1, t1 - t0, ...x.shape.slice(2)],
    true,
  );
}
