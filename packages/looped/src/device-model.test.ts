/**
 * The device model (toDevice: every parameter uploaded by name, looped-forward.ts on a backend's
 * ops) on the CPU's own ops against LoopedModel: the same readouts, logits, gate logits and
 * final-loss gradients bit for bit on each backbone (packed documents included), the parameters
 * in the CPU order, and the weights moved both ways. The webgpu twin of this test is
 * packages/looplm/src/gpu-device-model.test.ts.
 */
import {
  backward,
  crossEntropy,
  IGNORE_INDEX,
  IntTensor,
  releaseGrads,
  type Tensor,
} from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { parseConfig } from "./config.js";
import { cpuBackendOps } from "./cpu-backend-ops.js";
import { toDevice } from "./device-model.js";
import { LoopedModel } from "./model.js";

const V = 13;
const CASES = {
  "mamba, loop_norm, gate, untied head": {
    backbone: "mamba",
    n_layers: 1,
    n_loops: 3,
    loop_norm: true,
    exit_gate: true,
    tie_embeddings: false,
    ssm: { d_state: 4, headdim: 8, n_groups: 2, chunk_size: 4 },
  },
  "hybrid with GQA": {
    backbone: "hybrid",
    n_layers: 2,
    n_loops: 2,
    attn_layers: [0],
    ssm: { d_state: 4, headdim: 8, chunk_size: 8 },
    attention: { n_heads: 4, n_kv_heads: 2 },
  },
  transformer: {
    backbone: "transformer",
    n_layers: 1,
    n_loops: 2,
    mlp: { d_ff: 24 },
    attention: { n_heads: 2, n_kv_heads: 1 },
  },
} as const;

const B = 2;
const T = 6;
const tokens = Int32Array.from({ length: B * T }, (_v, i) => (7 * i + 3) % V);
const targets = Int32Array.from({ length: B * T }, (_v, i) => (i % 5 === 2 ? IGNORE_INDEX : i % V));
const seqIdx = Int32Array.from({ length: B * T }, (_v, i) => (i < T && i >= 3 ? 1 : 0));

const grads = (ts: Tensor[]) => ts.map((t) => Array.from(t.grad ?? []));

describe("DeviceModel on cpuBackendOps matches LoopedModel exactly", () => {
  for (const [name, extra] of Object.entries(CASES))
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
      if (model.exitGate)
        expect(dm.gateLogits(got.readouts).data).toEqual(model.exitGate.logits(want.readouts).data);
      else expect(() => dm.gateLogits(got.readouts)).toThrow(/no exit gate/);
      releaseGrads(model.parameters().map((p) => p.tensor));
    });

  it("copyTo and copyFrom move the weights both ways; a model of another shape is refused", async () => {
    const cfg = parseConfig({ vocab_size: V, d_model: 16, ...CASES.transformer });
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
      parseConfig({ vocab_size: V + 1, d_model: 16, ...CASES.transformer }),
      { seed: 1 },
    );
    await expect(dm.copyTo(other)).rejects.toThrow(/parameters differ/);
    expect(() => dm.forward(new IntTensor(tokens, [B * T]))).toThrow(
      /tokens must be \[B, T\], got \[12\]/,
    );
  });
});
