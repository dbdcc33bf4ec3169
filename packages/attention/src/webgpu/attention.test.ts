import { backward } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { expectClose, gpuForTests, toGpu } from "@loop/test-support-gpu";
import { releaseTransients, uploadTensor } from "@loop/webgpu";
import { attention, backwardGpu } from "@loop/webgpu/internal";
import { describe, expect, it } from "vitest";
import { attention as cpuAttention } from "../index.js";
import { compareAttention } from "./attention-oracle.test-util.js";

const ctx = await gpuForTests("webgpu attention");

describe.runIf(ctx)("webgpu attention matches @loop/attention's tiled attention", () => {
  const cases = [
    { B: 1, T: 1, Hq: 1, Hkv: 1, hd: 8 },
    { B: 2, T: 17, Hq: 4, Hkv: 2, hd: 8 },
    { B: 1, T: 70, Hq: 2, Hkv: 1, hd: 6 }, // T crosses the 64-row tiles
    { B: 2, T: 20, Hq: 4, Hkv: 1, hd: 8, doc: [[5, 6, 13], [1]] },
    // dK dV: head_dim below its 4 threads per key (some own no element), 3 query heads per KV
    // head, keys in three 64-key workgroups, query rows not a multiple of its 8-row blocks
    { B: 1, T: 131, Hq: 3, Hkv: 1, hd: 3 },
  ];
  for (const c of cases) {
    const { B, T, Hq, Hkv, hd, doc } = c;
    it(`B=${B} T=${T} Hq=${Hq} Hkv=${Hkv} hd=${hd}${doc ? " packed documents" : ""}: y, ∂q, ∂k, ∂v`, () =>
      compareAttention(ctx!, c));
  }

  it("computes only the gradients asked for", async () => {
    const q = randn([1, 5, 2, 4], 1);
    const k = randn([1, 5, 1, 4], 2);
    const v = randn([1, 5, 1, 4], 3);
    const dy = randn([1, 5, 2, 4], 4, { requiresGrad: false });
    backward([cpuAttention(q, k, v)], [dy.data]);
    const gq = toGpu(ctx!, q, false);
    const gk = toGpu(ctx!, k, false);
    const gv = toGpu(ctx!, v);
    backwardGpu(attention(gq, gk, gv), toGpu(ctx!, dy, false));
    expect(gq.grad).toBeNull();
    expect(gk.grad).toBeNull();
    await expectClose(gv.grad!, v.grad!, "∂v");
    gv.dispose();
    releaseTransients(ctx!);
  });

  it("gives the same ∂k and ∂v bits on every run (each element summed by one thread)", async () => {
    const q = randn([1, 70, 4, 6], 11);
    const k = randn([1, 70, 2, 6], 12);
    const v = randn([1, 70, 2, 6], 13);
    const dy = randn([1, 70, 4, 6], 14, { requiresGrad: false });
    const run = async () => {
      const gk = toGpu(ctx!, k);
      const gv = toGpu(ctx!, v);
      backwardGpu(attention(toGpu(ctx!, q, false), gk, gv), toGpu(ctx!, dy, false));
      const out = [...(await gk.grad!.read()), ...(await gv.grad!.read())];
      gk.dispose();
      gv.dispose();
      releaseTransients(ctx!);
      return out;
    };
    expect(await run()).toEqual(await run());
  });

  it("names the problem on bad input", () => {
    const q = uploadTensor(ctx!, new Float32Array(24), [1, 2, 3, 4]);
    const k = uploadTensor(ctx!, new Float32Array(16), [1, 2, 2, 4]);
    expect(() => attention(q, k, k)).toThrow(/Hq=3 must be a multiple of KV heads Hkv=2/);
    const k1 = uploadTensor(ctx!, new Float32Array(8), [1, 2, 1, 4]);
    expect(() => attention(q, k1, k1, { blockQ: 16 })).toThrow(/option blockQ is not supported/);
    const bad = uploadTensor(ctx!, new Int32Array(3), [3]);
    expect(() => attention(q, k1, k1, { seqIdx: bad })).toThrow(
      /seqIdx must be an i32 tensor of B·T = 2 values/,
    );
    releaseTransients(ctx!);
  });
});
