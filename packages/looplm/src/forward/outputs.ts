/*
 * Everything `outputs.safetensors` holds for a model and inputs (docs/formats.md "Golden vectors"):
 * logits.step{r}, loss.final, grad.final.{param}, and with an exit gate gate.lambda, exit.pdf,
 * loss.stage1, grad.stage1.{param} (every parameter), loss.stage2, grad.stage2.exit_gate.* and
 * exit.step.q{q} for each q of the inputs. Written once for every backend: the model uploaded
 * through `ops` (toDevice), the ops' losses and backward, the values read back. Each backward
 * gets a forward of its own, because a backward frees what it walks (the CPU's graph, the GPU's
 * activations as they are consumed); the exit steps are the threshold rule on the exit pdf read
 * back (exit-gate's thresholdExit).
 */
import {
  exitPdfOn,
  exitStepName,
  stage1LossOn,
  stage2LossOn,
  thresholdExit,
} from "@loop/exit-gate";
import { type LoopedModel, toDevice } from "@loop/looped";
import { type BackendOps, crossEntropyOn, type NamedArray } from "@loop/tensor";
import type { ForwardInputs } from "./inputs.js";

/**
 * Every golden-file tensor of one forward and backward on `ops` (logits of every step, losses,
 * gradients, gate outputs), by name, as `looplm forward` writes them.
 */
export async function forwardOutputs<T, I>(
  ops: BackendOps<T, I>,
  model: LoopedModel,
  inputs: ForwardInputs,
): Promise<Map<string, NamedArray>> {
  const dm = toDevice(model, ops);
  const params = dm.parameters();
  const out = new Map<string, NamedArray>();
  const put = async (key: string, t: T) => {
    const v = { data: await ops.read(t), shape: [...ops.shapeOf(t)] };
    out.set(key, v);
    return v;
  };
  /** Every parameter's gradient (zeros where the loss does not reach it), then cleared. */
  const grads = async (prefix: string, only: (name: string) => boolean = () => true) => {
    for (const { name, tensor } of params) {
      if (!only(name)) continue;
      const shape = [...ops.shapeOf(tensor)];
      const data = await ops.readGrad(tensor);
      out.set(`${prefix}.${name}`, {
        data: data ?? new Float32Array(shape.reduce((a, b) => a * b, 1)),
        shape,
      });
    }
    ops.zeroGrads(params.map((p) => p.tensor));
  };
  try {
    const tokens = ops.uploadInt(inputs.tokens.data, inputs.tokens.shape);
    const targets = ops.uploadInt(inputs.targets.data, inputs.targets.shape);
    let fwd = dm.forward(tokens, { steps: "all" });
    for (let i = 0; i < fwd.logits.length; i++)
      await put(`logits.step${fwd.stepIndex[i]}`, fwd.logits[i]!);
    const loss = crossEntropyOn(ops, fwd.logits[fwd.logits.length - 1]!, targets);
    await put("loss.final", loss);
    ops.backward(loss, 1);
    await grads("grad.final");
    if (!dm.hasExitGate) return out;
    fwd = dm.forward(tokens, { steps: "all" });
    const a = dm.gateLogits(fwd.readouts);
    const { lambda, pdf } = ops.noGrad(() => ({
      lambda: ops.unary("sigmoid", a),
      pdf: exitPdfOn(ops, a),
    }));
    const stage1 = stage1LossOn(ops, a, fwd.logits, targets, { beta: inputs.beta });
    await put("gate.lambda", lambda);
    const p = await put("exit.pdf", pdf);
    await put("loss.stage1", stage1);
    for (const q of inputs.q) {
      const steps = thresholdExit(p, q);
      out.set(exitStepName(q), { data: Float32Array.from(steps.data), shape: [...steps.shape] });
    }
    ops.backward(stage1, 1);
    await grads("grad.stage1");
    fwd = dm.forward(tokens, { steps: "all" });
    const gate = { logits: (r: readonly T[]) => dm.gateLogits(r) };
    const stage2 = stage2LossOn(ops, gate, fwd.readouts, fwd.logits, targets, {
      k: inputs.k,
      gamma: inputs.gamma,
    });
    await put("loss.stage2", stage2);
    ops.backward(stage2, 1);
    await grads("grad.stage2", (n) => n.startsWith("exit_gate."));
    return out;
  } finally {
    ops.releaseTransients();
    dm.dispose();
  }
}
