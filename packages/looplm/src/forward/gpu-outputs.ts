/**
 * `forwardOutputs` on the webgpu backend: the same tensors under the same names (docs/formats.md
 * "Golden vectors"), computed by the device model (@loop/looped's DeviceModel on the GPU ops)
 * and the ops' losses, read back at the end; the gradients through the GPU tape.
 * The exit steps are the threshold rule on the device's exit pdf (exit-gate's thresholdExit).
 */
import { exitStepName, thresholdExit } from "@loop/exit-gate";
import { type DeviceModel, type LoopedModel, toDevice } from "@loop/looped";
import type { NamedArray } from "@loop/tensor";
import {
  backwardGpu,
  type GpuContext,
  type GpuTensor,
  gpuModelOps,
  zeroGpuGrads,
} from "@loop/webgpu";
import type { ForwardInputs } from "./inputs.js";

async function named(t: GpuTensor): Promise<NamedArray> {
  return { data: await t.read(), shape: [...t.shape] };
}

/** Every parameter's gradient (zeros where the loss does not reach it), then cleared. */
async function collectGrads(
  out: Map<string, NamedArray>,
  prefix: string,
  gm: DeviceModel<GpuTensor, GpuTensor>,
  only?: (name: string) => boolean,
): Promise<void> {
  for (const p of gm.parameters()) {
    if (only && !only(p.name)) continue;
    out.set(`${prefix}.${p.name}`, {
      data: p.tensor.grad ? await p.tensor.grad.read() : new Float32Array(p.tensor.size),
      shape: [...p.tensor.shape],
    });
  }
  zeroGpuGrads(gm.parameters().map((p) => p.tensor));
}

export async function forwardOutputsGpu(
  ctx: GpuContext,
  model: LoopedModel,
  inputs: ForwardInputs,
): Promise<Map<string, NamedArray>> {
  const ops = gpuModelOps(ctx);
  const gm = toDevice(model, ops);
  try {
    const out = new Map<string, NamedArray>();
    const tokens = ops.uploadInt(inputs.tokens.data, inputs.tokens.shape);
    const targets = ops.uploadInt(inputs.targets.data, inputs.targets.shape);
    const fwd = gm.forward(tokens, { steps: "all" });
    for (let i = 0; i < fwd.logits.length; i++)
      out.set(`logits.step${fwd.stepIndex[i]}`, await named(fwd.logits[i]!));
    const loss = ops.crossEntropy(fwd.logits[fwd.logits.length - 1]!, targets);
    out.set("loss.final", await named(loss));
    if (loss.requiresGrad) backwardGpu(loss);
    await collectGrads(out, "grad.final", gm);
    if (gm.hasExitGate) {
      const a = gm.gateLogits(fwd.readouts);
      const { lambda, pdf } = ops.noGrad(() => ({ lambda: ops.sigmoid(a), pdf: ops.exitPdf(a) }));
      const gate = { logits: (r: readonly GpuTensor[]) => gm.gateLogits(r) };
      const stage1 = ops.stage1Loss(a, fwd.logits, targets, { beta: inputs.beta });
      const stage2 = ops.stage2Loss(gate, fwd.readouts, fwd.logits, targets, {
        k: inputs.k,
        gamma: inputs.gamma,
      });
      out.set("gate.lambda", await named(lambda));
      const p = await named(pdf);
      out.set("exit.pdf", p);
      out.set("loss.stage1", await named(stage1));
      out.set("loss.stage2", await named(stage2));
      backwardGpu(stage1);
      await collectGrads(out, "grad.stage1", gm);
      backwardGpu(stage2);
      await collectGrads(out, "grad.stage2", gm, (n) => n.startsWith("exit_gate."));
      for (const q of inputs.q) {
        const steps = thresholdExit(p, q);
        out.set(exitStepName(q), { data: Float32Array.from(steps.data), shape: [...steps.shape] });
      }
    }
    return out;
  } finally {
    ops.releaseTransients();
    gm.dispose();
  }
}
