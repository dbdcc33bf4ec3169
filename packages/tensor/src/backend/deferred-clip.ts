/*
 * Gradient clipping deferred to the update, for a device backend (`TrainOps.clipGrads`), written
 * once over what the device does: `note` only records each gradient's clipping — the norm
 * copied into a tensor of its own (so releasing the step's tensors cannot take it) and maxNorm —
 * and the optimiser applies the factor maxNorm/(norm + 1e-6) where norm > maxNorm as it reads the
 * gradient (no pass over the gradients of its own; `take`). Anything else that reads or extends
 * a noted gradient first applies the note (`settle`: the device's scaling kernel).
 */

/** What deferred clipping asks of a device. */
export interface ClipDevice<T> {
  /** A persistent copy of the one-element `norm` (reusing `into` when given). */
  keepNorm(norm: T, into: T | null): T;
  /** g ← g · maxNorm/(norm + 1e-6) when norm is finite and above maxNorm (on the device). */
  scale(g: T, norm: T, maxNorm: number): void;
  /** Whether `g` was released (its note is dropped). */
  released(g: T): boolean;
}

/** See the file comment. */
export class DeferredClip<T> {
  private readonly notes = new Map<T, number>();
  private norm: T | null = null;

  constructor(private readonly device: ClipDevice<T>) {}

  /** Clip `grads` by the one-element `norm` to `maxNorm`, when they are next read. */
  note(grads: readonly T[], norm: T, maxNorm: number): void {
    this.settleAll(); // the copy below replaces the norm earlier notes read
    this.norm = this.device.keepNorm(norm, this.norm);
    for (const g of grads) this.notes.set(g, maxNorm);
  }

  /** The clipping noted for `g` (and forget it: the caller applies it), or null. */
  take(g: T): { norm: T; maxNorm: number } | null {
    const maxNorm = this.notes.get(g);
    if (maxNorm === undefined) return null;
    this.notes.delete(g);
    return this.device.released(g) ? null : { norm: this.norm!, maxNorm };
  }

  /** Scale `g` now if a clipping is noted for it. */
  settle(g: T): void {
    const c = this.take(g);
    if (c) this.device.scale(g, c.norm, c.maxNorm);
  }

  /** Apply every noted clipping now. */
  settleAll(): void {
    for (const g of [...this.notes.keys()]) this.settle(g);
  }

  /** Drop the note of `g` (its gradient is zeroed). */
  forget(g: T | null): void {
    if (g) this.notes.delete(g);
  }
}
