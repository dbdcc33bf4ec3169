/**
 * The device model (toDevice: every parameter uploaded by name, looped-forward.ts on a backend's
 * ops) on the CPU's own ops against LoopedModel: the same readouts, logits and final-loss
 * gradients bit for bit on each backbone (packed documents included), the gate's logits to
 * rounding (composed over the kernels there, the CPU model's fused float64 op here), the parameters
 * in the CPU order, and the weights moved both ways. The webgpu twin of this test is
 * packages/looplm/src/gpu-device-model.test.ts.
 */
import { backward, crossEntropy, IntTensor, releaseGrads, type Tensor } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { parseConfig } from "./config.js";
import { cpuBackendOps } from "./cpu-backend-ops.js";
import { toDevice } from "./device-model.js";
import { MODEL_CASE_VOCAB, MODEL_CASES, modelCaseData } from "./device-model-cases.js";
import { LoopedModel } from "./model.js";

// (`looplm check`'s cases; the mamba one also carries an exit gate here, so the gate's logits are
// compared, while the others show that a model without one refuses them)
const V = MODEL_CASE_VOCAB;
const CASES = Object.entries(MODEL_CASES).map(([name, extra]) =>
  extra.backbone === "mamba"
    ? ([`${name}, gate`, { ...extra, exit_gate: true }] as const)
    : ([name, extra] as const),
);

const B = 2;
const T = 6;
const { tokens, targets, seqIdx } = modelCaseData(B, T, 7);

const grads = (ts: Tensor[]) => ts.map((t) => Array.from(t.grad ?? []));

describe("DeviceModel on cpuBackendOps matches LoopedModel exactly", () => {
  for (const [name, extra] of CASES)
    it(name, () => {
      const model = new LoopedModel(parseConfig({ vocab_size: V, d_model: 16, ...extra }), {
        seed: 4,
      });
      const dm = toDevice(model, cpuBackendOps);
      expect(dm.parameters().map((p) => [p.name, p.decay])).toEqual(
        model.parameters().map((p) => [p.name, p.decay]),
      );
      const tok = new IntTensor(tokens, [B, T]);
      const tgt = new IntTensor(targets, [B, T]);
      const want = model.forward(tok, { steps: "all", seqIdx });
      const got = dm.forward(tok, { steps: "all", seqIdx: new IntTensor(seqIdx, [B * T]) });
      expect(got.stepIndex).toEqual(want.stepIndex);
      got.logits.forEach((l, i) => {
        expect(l.data).toEqual(want.logits[i]!.data);
        expect(got.readouts[i]!.data).toEqual(want.readouts[i]!.data);
      });
      backward(crossEntropy(want.logits.at(-1)!, tgt));
      backward(crossEntropy(got.logits.at(-1)!, tgt));
      expect(grads(dm.parameters().map((p) => p.tensor))).toEqual(
        grads(model.parameters().map((p) => p.tensor)),
      );
      if (model.exitGate) {
        const a = dm.gateLogits(got.readouts).data;
        const b = model.exitGate.logits(want.readouts).data;
        expect(a.length).toBe(b.length);
        for (const [i, v] of a.entries())
          expect(Math.abs(v - b[i]!)).toBeLessThan(1e-6 * (1 + Math.abs(b[i]!)));
      } else expect(() => dm.gateLogits(got.readouts)).toThrow(/no exit gate/);
      releaseGrads(model.parameters().map((p) => p.tensor));
    });

  it("copyTo and copyFrom move the weights both ways; a model of another shape is refused", async () => {
    const cfg = parseConfig({ vocab_size: V, d_model: 16, ...MODEL_CASES.transformer });
    const a = new LoopedModel(cfg, { seed: 1 });
    const b = new LoopedModel(cfg, { seed: 2 });
    const dm = toDevice(a, cpuBackendOps);
    await dm.copyTo(b);
    b.parameters().forEach((p, i) => {
      expect(p.tensor.data).toEqual(a.parameters()[i]!.tensor.data);
    });
    const c = new LoopedModel(cfg, { seed: 9 });
    const held = dm.parameters()[0]!.tensor;
    dm.copyFrom(c);
    expect(dm.parameters()[0]!.tensor).toBe(held); // in place: holders of the tensors keep them
    await dm.copyTo(b);
    expect(b.parameters()[0]!.tensor.data).toEqual(c.parameters()[0]!.tensor.data);
    const other = new LoopedModel(
      parseConfig({ vocab_size: V + 1, d_model: 16, ...MODEL_CASES.transformer }),
      { seed: 1 },
    );
    await expect(dm.copyTo(other)).rejects.toThrow(/parameters differ/);
    expect(() => dm.forward(new IntTensor(tokens, [B * T]))).toThrow(
      /tokens must be \[B, T\], got \[12\]/,
    );
  });
});
