/**
 * The exit-gate tensors of `looplm forward` (docs/formats.md): gate.lambda, exit.pdf, loss.stage1 and
 * grad.stage1.{param} for every parameter, loss.stage2 and grad.stage2.exit_gate.*, and
 * exit.step.q{q} for each q of the inputs.
 */
import { gateOutputs } from "@loop/exit-gate";
import type { LoopedModel } from "@loop/looped";
import { backward, type NamedArray } from "@loop/tensor";
import type { ForwardInputs } from "./inputs.js";

export function gateOutputsFor(model: LoopedModel, inputs: ForwardInputs): Map<string, NamedArray> {
  const gate = model.exitGate;
  if (!gate)
    throw new Error("gateOutputsFor: the model has no exit gate (config exit_gate is false)");
  const params = model.parameters();
  const fwd = model.forward(inputs.tokens, { steps: "all" });
  const g = gateOutputs(fwd.readouts, fwd.logits, inputs.targets, gate, {
    beta: inputs.beta,
    k: inputs.k,
    gamma: inputs.gamma,
    qs: inputs.q,
  });
  const out = new Map<string, NamedArray>(g.tensors);
  const collect = (prefix: string, only?: (name: string) => boolean) => {
    for (const p of params) {
      if (only && !only(p.name)) continue;
      out.set(`${prefix}.${p.name}`, {
        data: p.tensor.grad ?? new Float32Array(p.tensor.size),
        shape: [...p.tensor.shape],
      });
      p.tensor.grad = null;
    }
  };
  for (const p of params) p.tensor.grad = null;
  backward(g.stage1);
  collect("grad.stage1");
  backward(g.stage2);
  collect("grad.stage2", (n) => n.startsWith("exit_gate."));
  for (const p of params) p.tensor.grad = null;
  return out;
}
