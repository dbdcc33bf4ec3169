/*
 * Autograd for a device backend (`AutogradOps`), written once over its `DeviceTape`: recording
 * on and off, the backward walk seeded with the loss weight, the trainable leaves' gradients
 * (read, zeroed, whether live), activation checkpointing and gradient clipping deferred to the
 * update (`DeferredClip`). A backend supplies what these read of its memory (`AutogradDevice`);
 * its optimiser kernels ask the result for a parameter's gradient with its clipping applied or
 * still pending (`gradOf`, `takeGrad`).
 */
import type { AutogradOps } from "../backend/autograd-ops.js";
import { type ClipDevice, DeferredClip } from "../backend/deferred-clip.js";
import type { DeviceTape } from "./device-tape.js";
import type { TapeTensor, WalkOptions } from "./device-tape-types.js";

/** What `deviceAutograd` reads and writes of a backend's memory. */
export interface AutogradDevice<T extends TapeTensor<T>> {
  /** For messages ("cuda", "webgpu"). */
  readonly name: string;
  /** The backend's tape (one per context or device). */
  readonly tape: DeviceTape<T>;
  /** A one-element tensor holding `value` (the loss's seed). */
  scalar(value: number): T;
  /** The values of `t` on the host. */
  read(t: T): Promise<Float32Array>;
  /** A view of x's block with no node (checkpointing's stand-in for its input). */
  standIn(x: T): T;
  /** How a walk gives memory back (the outer walk's and a checkpoint's recomputation's). */
  walk(): Omit<WalkOptions<T>, "wrt" | "nodes">;
  /** Mark `t` trainable or frozen (a leaf that gathers a gradient, or not). */
  setTrainable(t: T, on: boolean): void;
  /** Zeroing gives the gradients' blocks back (true) or keeps them for the next step. */
  readonly freeGradsOnZero: boolean;
  /** The device's part of clipping: keep the norm, scale a gradient, whether one went back. */
  readonly clip: ClipDevice<T>;
}

/** AutogradOps with what a backend's optimiser kernels ask of the gradients. */
export interface DeviceAutograd<T> extends AutogradOps<T> {
  /** The gradient of trainable `t`, with any pending clipping applied (throws when it has none). */
  gradOf(t: T): T;
  /**
   * The gradient of `t` with its pending clipping handed over (the reader applies it, as AdamW
   * does): null clip when none is pending.
   */
  takeGrad(t: T): { grad: T; clip: { norm: T; maxNorm: number } | null };
}

/** `AutogradOps` over `dev`'s tape (see the file comment). */
export function deviceAutograd<T extends TapeTensor<T>>(dev: AutogradDevice<T>): DeviceAutograd<T> {
  const { tape } = dev;
  const clip = new DeferredClip<T>(dev.clip);
  const live = (t: T): T => {
    if (!tape.hasGrad(t))
      throw new Error(`${dev.name}: tensor ${t.id} [${t.shape}] has no gradient`);
    return t.grad!;
  };
  return {
    noGrad: (fn) => tape.withRecording(false, fn),
    backward(loss, weight) {
      if (loss.size !== 1)
        throw new Error(`${dev.name} backward: the loss has shape [${loss.shape}]`);
      if (!loss.requiresGrad)
        throw new Error(`${dev.name} backward: the loss records no gradient path`);
      clip.settleAll(); // gradients added to after a clipping hold the clipped values
      tape.backward(loss, dev.scalar(weight), dev.walk());
    },
    setTrainable: (t, on) => dev.setTrainable(t, on),
    hasGrad: (t) => tape.hasGrad(t),
    zeroGrads(params) {
      for (const p of params) clip.forget(p.grad);
      tape.zeroGrads(params, dev.freeGradsOnZero);
    },
    async readGrad(t) {
      if (!tape.hasGrad(t)) return null;
      clip.settle(t.grad!);
      return dev.read(t.grad!);
    },
    clipGrads(params, norm, maxNorm) {
      if (!(maxNorm > 0))
        throw new Error(`${dev.name} clipGrads: maxNorm must be > 0, got ${maxNorm}`);
      clip.note(params.map(live), norm, maxNorm);
    },
    checkpoint: (fn, x, params) => tape.checkpoint(fn, x, params, dev.standIn, dev.walk()),
    gradOf(t) {
      const g = live(t);
      clip.settle(g);
      return g;
    },
    takeGrad(t) {
      const grad = live(t);
      return { grad, clip: clip.take(grad) };
    },
  };
}
