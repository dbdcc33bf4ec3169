/*
 * What the code above a backend asks of its autograd: recording on or off, the backward walk
 * from a loss, the trainable leaves' gradients, activation checkpointing and gradient clipping.
 * No backend writes these: the device backends get them from `deviceAutograd` (one DeviceTape
 * walk over the backend's memory), the CPU from its own tensors' tape (`cpuAutograd`), both in
 * this package.
 */

/** Autograd over a backend's float tensors `T` (see the file comment). */
export interface AutogradOps<T> {
  /** `fn` with recording off: no tape, no gradients. */
  noGrad<R>(fn: () => R): R;
  /**
   * Backpropagate from the one-element `loss`, its gradient seeded with `weight`; the gradients
   * of the trainable leaves accumulate (a sum over calls until `zeroGrads`).
   */
  backward(loss: T, weight: number): void;
  /** Train `t` or freeze it (a frozen leaf gets no gradient and no update). */
  setTrainable(t: T, on: boolean): void;
  /** Whether `t` trains and holds a gradient now. */
  hasGrad(t: T): boolean;
  /** Drop the gradients of `params`. */
  zeroGrads(params: readonly T[]): void;
  /** The gradient of `t` on the host (null when it has none). */
  readGrad(t: T): Promise<Float32Array | null>;
  /**
   * Scale the gradients of `params` by maxNorm/(norm + 1e-6) when `norm` (from `gradNorm`) is
   * finite and above `maxNorm`; otherwise leave them.
   */
  clipGrads(params: readonly T[], norm: T, maxNorm: number): void;
  /**
   * Activation checkpointing: `fn(x)` run without keeping its intermediate activations, which
   * the backward recomputes; `params` are the trainable leaves `fn` reads besides `x`. Absent
   * where the backend does not offer it (the CPU model has its own, `LoopedModel.forward`).
   */
  checkpoint?(fn: (x: T) => T, x: T, params: readonly T[]): T;
}
