/*
 * The gradients of non-leaf tensors during one backward sweep. A backward may hand the same array
 * to several inputs (add: ∂a = ∂b = g) or pass its incoming gradient straight through (reshape,
 * add): arrays are shared between slots instead of copied. Each array counts the slots holding
 * it; summing into an array held by more than one slot first copies it (copy on write).
 */
import { computeSame } from "../ops/binary.js";
import { allocF32Uninit, type Tensor } from "../tensor.js";

export class GradStore {
  private readonly slots = new Map<Tensor, Float32Array>();
  private readonly holders = new Map<Float32Array, number>();

  /** Add `g` into t's gradient (g is never written; it may be shared). */
  accumulate(t: Tensor, g: Float32Array): void {
    const prev = this.slots.get(t);
    if (prev === undefined) {
      this.slots.set(t, g);
      this.holders.set(g, (this.holders.get(g) ?? 0) + 1);
      return;
    }
    const n = prev.length;
    if ((this.holders.get(prev) ?? 0) > 1) {
      const sum = allocF32Uninit(n);
      computeSame("add", prev, g, sum);
      this.release(prev);
      this.slots.set(t, sum);
      this.holders.set(sum, 1);
      return;
    }
    computeSame("add", prev, g, prev);
  }

  /** Like accumulate, for an array the store must never write (a caller's seed). */
  accumulateReadOnly(t: Tensor, g: Float32Array): void {
    this.holders.set(g, (this.holders.get(g) ?? 0) + 1);
    this.accumulate(t, g);
  }

  /** Remove and return t's gradient (null when it has none). */
  take(t: Tensor): Float32Array | null {
    const g = this.slots.get(t);
    if (g === undefined) return null;
    this.slots.delete(t);
    this.release(g);
    return g;
  }

  private release(g: Float32Array): void {
    const c = this.holders.get(g)!;
    if (c <= 1) this.holders.delete(g);
    else this.holders.set(g, c - 1);
  }
}
