/**
 * The device model on the WebGPU ops (toDevice(model, gpuBackendOps(ctx)): @loop/looped's forward
 * written once, run on the GPU) against LoopedModel (the CPU oracle, itself checked against the golden files):
 * the same weights and tokens give the same readouts and logits of every loop step and the same
 * gradient of the final-loop cross-entropy for every parameter (summed over the R uses of the
 * shared weights), on each backbone — with packed documents (seqIdx), an untied head, loop_norm,
 * several SSM groups and grouped-query attention. The golden cases run through
 * `looplm forward --backend webgpu` (packages/looplm/src/forward/golden.test.ts).
 */
import { LoopedModel, parseConfig, toDevice } from "@loop/looped";
import { MODEL_CASE_VOCAB, MODEL_CASES, modelCaseData } from "@loop/looped/internal";
import { backward, crossEntropy, crossEntropyOn, IntTensor } from "@loop/tensor";
import { expectClose, gpuForTests } from "@loop/test-support-gpu";
import { gpuBackendOps, releaseTransients, uploadTensor } from "@loop/webgpu";
import { backwardGpu, transientCount, zeroGpuGrads } from "@loop/webgpu/internal";
import { describe, expect, it } from "vitest";

const ctx = await gpuForTests("webgpu looped model");

// (the cases are `looplm check`'s, from @loop/looped: one table for both)
const V = MODEL_CASE_VOCAB;
const CASES = MODEL_CASES;
const data = modelCaseData;

describe.runIf(ctx)("the device model on webgpu matches LoopedModel", () => {
  for (const [name, extra] of Object.entries(CASES))
    it(name, async () => {
      const B = 2;
      const T = 7;
      const cpu = new LoopedModel(parseConfig({ vocab_size: V, d_model: 16, ...extra }), {
        seed: 5,
      });
      const ops = gpuBackendOps(ctx!);
      const gm = toDevice(cpu, ops);
      expect(gm.parameters().map((p) => p.name)).toEqual(cpu.parameters().map((p) => p.name));
      const { tokens, targets, seqIdx } = data(B, T, 7);
      const want = cpu.forward(new IntTensor(tokens, [B, T]), { steps: "all", seqIdx });
      const loss = crossEntropy(want.logits.at(-1)!, new IntTensor(targets, [B, T]));
      backward(loss);
      const got = gm.forward(uploadTensor(ctx!, tokens, [B, T]), {
        steps: "all",
        seqIdx: uploadTensor(ctx!, seqIdx, [B * T]),
      });
      expect(got.stepIndex).toEqual(want.stepIndex);
      for (let i = 0; i < want.logits.length; i++) {
        await expectClose(got.readouts[i]!, want.readouts[i]!.data, `readout ${i + 1}`);
        await expectClose(got.logits[i]!, want.logits[i]!.data, `logits ${i + 1}`);
      }
      const gl = crossEntropyOn(ops, got.logits.at(-1)!, uploadTensor(ctx!, targets, [B, T]));
      await expectClose(gl, loss.data, "loss");
      backwardGpu(gl);
      const cpuParams = cpu.parameters();
      for (const [i, p] of gm.parameters().entries()) {
        const g = cpuParams[i]!.tensor.grad!;
        let scale = 0;
        for (const v of g) scale = Math.max(scale, Math.abs(v));
        const a = await p.tensor.grad!.read();
        // compared relative to the tensor's largest gradient, as docs/formats.md does
        await expectClose(
          a.map((v) => v / scale),
          Array.from(g, (v) => v / scale),
          `grad ${p.name}`,
          2e-4,
        );
      }
      zeroGpuGrads(gm.parameters().map((p) => p.tensor));
      releaseTransients(ctx!);
      expect(transientCount(ctx!)).toBe(0);
      gm.dispose();
    });

  it("last step only, readouts only; copyTo and copyFrom move the weights both ways", async () => {
    const cfg = parseConfig({ vocab_size: V, d_model: 16, ...CASES.transformer });
    const a = new LoopedModel(cfg, { seed: 1 });
    const b = new LoopedModel(cfg, { seed: 2 });
    const gm = toDevice(a, gpuBackendOps(ctx!));
    const tok = uploadTensor(ctx!, data(1, 5, 3).tokens, [1, 5]);
    const last = gm.forward(tok, { steps: "last", skipLogits: true });
    expect(last.stepIndex).toEqual([2]);
    expect(last.logits).toEqual([]);
    await gm.copyTo(b);
    b.parameters().forEach((p, i) => {
      expect(p.tensor.data).toEqual(a.parameters()[i]!.tensor.data);
    });
    const c = new LoopedModel(cfg, { seed: 9 });
    gm.copyFrom(c);
    await gm.copyTo(b);
    expect(b.parameters()[0]!.tensor.data).toEqual(c.parameters()[0]!.tensor.data);
    expect(() => gm.forward(uploadTensor(ctx!, new Int32Array(5), [5]))).toThrow(
      /tokens must be \[B, T\], got \[5\]/,
    );
    releaseTransients(ctx!);
    gm.dispose();
  });
});
