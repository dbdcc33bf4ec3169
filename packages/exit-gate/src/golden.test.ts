/**
 * Golden checks of the gate maths against the independent PyTorch implementation
 * (testdata/golden/*-gate). The whole-model cases need the looped backbone for the readouts; what
 * this package can check on its own, from the recorded gate.lambda and logits.step{r}, is:
 * λ → exit.pdf, exit.pdf → exit.step.q*, loss.stage1 and loss.stage2, and the exit_gate.bias
 * gradients (∂L/∂bias = Σ_{r,t} ∂L/∂a(r)_t since a = w·readout + bias).
 */
import { readFileSync } from "node:fs";
import { backward, type IntTensor, intTensor, type Tensor, tensor } from "@loop/tensor";
import { expectGolden, goldenPath, loadGolden } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { exitPdf } from "./exit-pdf.js";
import { exitStepName } from "./format-q.js";
import { perStepCrossEntropyDetached } from "./per-step-ce.js";
import { stage1Loss } from "./stage1.js";
import { stage2Objective } from "./stage2.js";
import { thresholdExit } from "./threshold-exit.js";

interface Inputs {
  targets: number[][];
  beta: number;
  k: number;
  gamma: number;
  q: number[];
}

function load(name: string) {
  const out = loadGolden(name, "outputs.safetensors");
  const inputs = JSON.parse(readFileSync(goldenPath(name, "inputs.json"), "utf8")) as Inputs;
  const get = (k: string) => {
    const t = out.get(k);
    if (!t) throw new Error(`golden ${name}: missing ${k}`);
    return t;
  };
  const lam = get("gate.lambda");
  const R = lam.shape[0]!;
  const B = inputs.targets.length;
  const T = inputs.targets[0]!.length;
  const targets: IntTensor = intTensor(inputs.targets.flat(), [B, T]);
  const logits: Tensor[] = [];
  for (let r = 1; r <= R; r++) {
    const l = get(`logits.step${r}`);
    logits.push(tensor(l.data, l.shape, true));
  }
  // Gate logits recovered from λ in float64: a = ln λ − ln(1 − λ).
  const a = tensor(
    Array.from(lam.data, (l) => Math.log(l) - Math.log1p(-l)),
    lam.shape,
    true,
  );
  return { get, inputs, targets, logits, a, R };
}

const sumGrad = (t: Tensor) => [t.grad!.reduce((s, g) => s + g, 0)];

for (const name of ["mamba-2x2-gate", "mamba-1x4-loopnorm-gate"]) {
  describe(`golden ${name}`, () => {
    const g = load(name);

    it("exit.pdf from gate.lambda", () => {
      const p = exitPdf(g.a);
      expect(p.shape).toEqual(g.get("exit.pdf").shape);
      expectGolden("exit.pdf", p.data, g.get("exit.pdf").data, "forward");
    });

    it("exit.step.q* from exit.pdf (ours and the golden one)", () => {
      const p = exitPdf(g.a);
      for (const q of g.inputs.q) {
        const want = g.get(exitStepName(q));
        const golden = { data: g.get("exit.pdf").data, shape: g.get("exit.pdf").shape };
        for (const pdf of [p, golden]) {
          const z = thresholdExit(pdf, q);
          expect(z.shape).toEqual(want.shape);
          expect(Array.from(z.data)).toEqual(Array.from(want.data));
        }
      }
    });

    /** A stage's loss (from fresh gate logits) and the exit_gate.bias gradient it gives. */
    const expectStage = (stage: "stage1" | "stage2", loss: () => Tensor) => {
      g.a.grad = null;
      const L = loss();
      expectGolden(`loss.${stage}`, L.data, g.get(`loss.${stage}`).data, "forward");
      backward(L);
      const bias = `grad.${stage}.exit_gate.bias`;
      expectGolden(bias, sumGrad(g.a), g.get(bias).data, "grad");
    };

    it("loss.stage1 and grad.stage1.exit_gate.bias", () => {
      expectStage("stage1", () => stage1Loss(g.a, g.logits, g.targets, { beta: g.inputs.beta }));
    });

    it("loss.stage2 and grad.stage2.exit_gate.bias", () => {
      expectStage("stage2", () => {
        const ce = perStepCrossEntropyDetached(g.logits, g.targets);
        return stage2Objective(g.a, ce, g.targets, g.inputs.k, g.inputs.gamma);
      });
    });
  });
}
