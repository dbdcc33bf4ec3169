/* The CPU's exit-gate ops as a `ModelOps` slice (@loop/tensor): this package's ops as they are. */
import type { ExitGateOps, IntTensor, Tensor } from "@loop/tensor";
import { exitPdf } from "./exit-pdf.js";
import { gateLogits } from "./gate-logits.js";
import { stage1Loss } from "./stage1.js";
import { stage2Loss } from "./stage2.js";

/**
 * The exit-gate ops (gate logits, exit distribution, stage-1 and stage-2 losses) on CPU tensors.
 */
export const cpuExitGateOps: ExitGateOps<Tensor, IntTensor> = {
  gateLogits,
  exitPdf,
  stage1Loss,
  stage2Loss,
};
