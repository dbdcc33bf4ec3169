/**
 * Test support: mean cross-entropy on the device as it is written above the backends (ceRows,
 * then maskedMean), so the op tests check the composition the trainer really runs.
 */
import type { GpuTensor } from "../gpu-tensor.js";
import { crossEntropyPerToken } from "./cross-entropy.js";
import { maskedMean } from "./masked-mean.js";

export const meanCrossEntropy = (logits: GpuTensor, targets: GpuTensor): GpuTensor =>
  maskedMean(crossEntropyPerToken(logits, targets), targets);
