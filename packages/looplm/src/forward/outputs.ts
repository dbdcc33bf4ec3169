/**
 * Everything `outputs.safetensors` holds for a model and inputs (docs/formats.md "Golden vectors"):
 * logits.step{r}, loss.final, grad.final.{param}, and — with an exit gate — the gate tensors.
 * `looplm forward` and the golden tests both call this one function.
 */
import type { LoopedModel } from "@loop/looped";
import { backward, crossEntropy, type NamedArray } from "@loop/tensor";
import { gateOutputsFor } from "./gate-outputs.js";
import type { ForwardInputs } from "./inputs.js";

export function forwardOutputs(model: LoopedModel, inputs: ForwardInputs): Map<string, NamedArray> {
  const out = new Map<string, NamedArray>();
  const params = model.parameters();
  for (const p of params) p.tensor.grad = null;
  const fwd = model.forward(inputs.tokens, { steps: "all" });
  fwd.logits.forEach((l, i) => {
    out.set(`logits.step${fwd.stepIndex[i]}`, { data: l.data, shape: [...l.shape] });
  });
  const loss = crossEntropy(fwd.logits[fwd.logits.length - 1]!, inputs.targets);
  out.set("loss.final", { data: Float32Array.of(loss.item()), shape: [1] });
  if (loss.requiresGrad) backward(loss);
  for (const p of params) {
    out.set(`grad.final.${p.name}`, {
      data: p.tensor.grad ?? new Float32Array(p.tensor.size),
      shape: [...p.tensor.shape],
    });
    p.tensor.grad = null;
  }
  if (model.exitGate) for (const [k, v] of gateOutputsFor(model, inputs)) out.set(k, v);
  return out;
}
