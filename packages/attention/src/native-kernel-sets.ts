/*
 * The native kernels of @loop/attention (native/attention.c), as its portable kernels call them:
 * group `attention`. The `/node` entry registers them; `kernelSet("attention")` finds them.
 */
import type { FlashBwdNative } from "./attention-backward.js";
import type { FlashFwdNative } from "./attention-forward.js";
import type { RopeNative } from "./rope.js";
import type { SwigluBwdNative, SwigluFwdNative } from "./swiglu.js";

/**
 * The attention kernels a native addon provides (RoPE, flash attention forward and backward, SwiGLU
 * forward and backward), registered as the kernel set `attention`.
 */
export interface AttentionKernelSet {
  rope: RopeNative;
  flashFwd: FlashFwdNative;
  flashBwd: FlashBwdNative;
  swigluFwd: SwigluFwdNative;
  swigluBwd: SwigluBwdNative;
}

declare module "@loop/tensor/kernel" {
  interface NativeKernelSets {
    attention: AttentionKernelSet;
  }
}
