/**
 * Recurrent decoding on the native kernels (the fused Mamba-2 step of @loop/ssm-kernels, the
 * native GEMM, norms and attention): decodeStep reproduces the full forward's logits of every
 * loop step within the decode tolerance, and gives the same bits on 1 and 2 threads. (The other
 * decoding tests run the portable kernels.)
 */
import { intTensor, noGrad } from "@loop/tensor";
import { nativeKernelNames } from "@loop/tensor/kernel";
import { startThreadPool, stopThreadPool } from "@loop/tensor/node";
import { nativeSuiteRuns } from "@loop/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { decodeStep, initDecodeState } from "../decode.js";
import { configs, relErr, TOL, tokens } from "../helpers.test-util.js";
import { LoopedModel } from "../model.js";
import { disableNativeKernels, enableNativeKernels } from "./native-kernels.js";

// The one call that switches on all three packages' kernels (tensor, ssm, attention).
const native = await enableNativeKernels();
const builds = [
  native.enabled ? { ok: true as const } : { ok: false as const, error: native.reason ?? "" },
];

describe.runIf(nativeSuiteRuns("native decoding", ...builds))(
  "decodeStep on native kernels",
  () => {
    afterAll(async () => {
      await stopThreadPool();
      disableNativeKernels();
    });

    it("one call registers the tensor, ssm and attention kernel groups", () => {
      const groups = new Set(nativeKernelNames().map((n) => n.split("/")[0]));
      expect([...groups]).toEqual(expect.arrayContaining(["tensor", "ssm", "attention"]));
      expect(native.kernels).toEqual(nativeKernelNames());
    });

    /** Every loop step's logits of T tokens fed one decodeStep at a time, [T][R] of [B,V]. */
    function decodeAll(m: LoopedModel, seqs: number[][]): Float32Array[][] {
      const T = seqs[0]!.length;
      const st = initDecodeState(m, seqs.length, T);
      return Array.from({ length: T }, (_, t) =>
        decodeStep(
          m,
          st,
          seqs.map((s) => s[t]!),
        ).logits.map((l) => l.data),
      );
    }

    for (const [name, cfg] of Object.entries(configs)) {
      it(`${name}: every step's logits match the full forward; 1 and 2 threads give the same bits`, async () => {
        const m = new LoopedModel(cfg, { seed: 9 });
        const seqs = tokens(3, 7, 1);
        const [B, T, V] = [3, 7, cfg.vocab_size];
        const par = noGrad(() => m.forward(intTensor(seqs.flat(), [B, T])));
        await stopThreadPool();
        const one = decodeAll(m, seqs);
        await startThreadPool(2);
        const two = decodeAll(m, seqs);
        for (let t = 0; t < T; t++)
          for (let r = 0; r < cfg.n_loops; r++) {
            const want = new Float32Array(B * V);
            for (let b = 0; b < B; b++)
              want.set(par.logits[r]!.data.subarray((b * T + t) * V, (b * T + t + 1) * V), b * V);
            expect(relErr(one[t]![r]!, want), `token ${t} step ${r + 1}`).toBeLessThan(TOL);
            expect(Array.from(two[t]![r]!), `token ${t} step ${r + 1}: 2 threads`).toEqual(
              Array.from(one[t]![r]!),
            );
          }
      });
    }
  },
);
