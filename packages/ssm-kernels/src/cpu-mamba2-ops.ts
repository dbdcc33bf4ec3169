/*
 * The CPU's Mamba-2 ops as a `ModelOps` slice (@loop/tensor): this package's fused ops, called
 * as they are; index tensors (`seqIdx`) reach them as their Int32Array.
 */
import type { IntTensor, Mamba2Ops, Tensor } from "@loop/tensor";
import { causalConv1dSiluSplit } from "./conv-silu-split.js";
import { gatedRmsnorm } from "./gated-rmsnorm.js";
import { softplusBias } from "./mamba2-ops.js";
import { ssdScanChunked } from "./ssd-scan-chunked.js";

/**
 * The Mamba-2 ops (conv1d + silu + split, softplus bias, chunked SSD scan, gated RMSNorm, D skip)
 * on CPU tensors and the kernels in scope.
 */
export const cpuMamba2Ops: Mamba2Ops<Tensor, IntTensor> = {
  causalConv1dSiluSplit: (x, w, b, init, widths, seqIdx) =>
    causalConv1dSiluSplit(x, w, b, init, widths, seqIdx?.data ?? null),
  softplusBias,
  ssdScanChunked: (x, dt, A, B, C, opts) =>
    ssdScanChunked(x, dt, A, B, C, { ...opts, seqIdx: opts.seqIdx?.data ?? null }),
  gatedRmsnorm,
};
