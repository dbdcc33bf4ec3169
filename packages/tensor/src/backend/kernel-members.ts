/*
 * The contract's members as data (docs/backends.md): what every backend implements
 * (`KernelOps`), what it may add, and what autograd adds above it. A test holds these lists to
 * the types; `looplm check --backend-module` names a missing kernel from them.
 */

/** The members every backend implements: `KernelOps`' required ones. */
export const KERNEL_OPS_MEMBERS = [
  // transfers
  "upload",
  "uploadInt",
  "read",
  "write",
  "dispose",
  "shapeOf",
  "releaseTransients",
  // the general kernels
  "embedding",
  "rmsnorm",
  "linear",
  "reshape",
  "unary",
  "binary",
  "affine",
  "split",
  "concat",
  "ceRows",
  "maskedMean",
  // Mamba-2
  "causalConv1dSiluSplit",
  "softplusBias",
  "ssdScanChunked",
  "gatedRmsnorm",
  // attention and the MLP
  "rope",
  "attention",
  "swiglu",
  // the optimiser's
  "name",
  "gradNorm",
  "zeros",
  "adamw",
] as const;

/**
 * The members a backend may add: fused composites, a hint, the training step's device
 * switches, and the decode kernels (`DecodeOps`).
 */
export const OPTIONAL_KERNEL_OPS_MEMBERS = [
  "linears",
  "linearSplit",
  "projectedAttention",
  "done",
  "guardFinite",
  "flush",
  "scaleGrads",
  "mamba2Step",
  "attendStep",
] as const;

/** The members autograd adds (`AutogradOps`), written once above the backends. */
export const AUTOGRAD_MEMBERS = [
  "noGrad",
  "backward",
  "setTrainable",
  "hasGrad",
  "zeroGrads",
  "readGrad",
  "clipGrads",
  "checkpoint",
] as const;
