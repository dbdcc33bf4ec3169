/**
 * Decoding and prefill against the independent PyTorch reference: for every whole-model golden
 * case (testdata/golden/<case>, Mamba-2, hybrid with its KV cache, Transformer), the first third
 * of each sequence enters by prefill, the second third by a second prefill from the carried
 * states, the rest one decodeStep at a time — and every loop step's logits at each of those
 * positions must equal the golden `logits.step{r}` of the full forward within docs/formats.md's
 * tolerance (a causal model's logits at position t do not depend on how the tokens before it
 * entered). On the portable kernels and on the native ones (tensor, Mamba-2 step, SSD,
 * attention; the native case asserts the fused native decode step and SSD ran).
 */
import { readFileSync } from "node:fs";
import { disableNativeAttentionKernels, enableNativeAttentionKernels } from "@loop/attention/node";
import { disableNativeSsmKernels, enableNativeSsmKernels } from "@loop/ssm-kernels/node";
import type { Tensor } from "@loop/tensor";
import * as kernelProfile from "@loop/tensor/node";
import { disableNativeTensorKernels, enableNativeTensorKernels } from "@loop/tensor/node";
import {
  expectGolden,
  goldenModelCases,
  goldenPath,
  loadGolden,
  nativeSuiteRuns,
  withNativeCalls,
} from "@loop/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeStep, initDecodeState } from "../decode.js";
import { prefill } from "../prefill.js";
import { loadCheckpoint } from "./checkpoint-files.js";

const cases = goldenModelCases();

/** Position t of golden logits [B,T,V] as [B,V]. */
function at(logits: Float32Array, B: number, T: number, V: number, t: number): Float32Array {
  const out = new Float32Array(B * V);
  for (let b = 0; b < B; b++) out.set(logits.subarray((b * T + t) * V, (b * T + t + 1) * V), b * V);
  return out;
}

/** Runs the case; returns how many (position, loop step) pairs were compared. */
function decodeCase(name: string): number {
  const model = loadCheckpoint(goldenPath(name));
  const tokens = (
    JSON.parse(readFileSync(goldenPath(name, "inputs.json"), "utf8")) as {
      tokens: number[][];
    }
  ).tokens;
  const want = loadGolden(name, "outputs.safetensors");
  const R = model.config.n_loops;
  const B = tokens.length;
  const T = tokens[0]!.length;
  const V = model.config.vocab_size;
  const st = initDecodeState(model, B, T);
  let compared = 0;
  const check = (logits: Tensor[], t: number, how: string) => {
    expect(logits.length).toBe(R);
    logits.forEach((l, r) => {
      const gold = want.get(`logits.step${r + 1}`)!.data;
      expectGolden(
        `${name} ${how} position ${t} step ${r + 1}`,
        l.data,
        at(gold, B, T, V, t),
        "forward",
      );
      compared++;
    });
  };
  const p1 = Math.floor(T / 3);
  const p2 = Math.floor((2 * T) / 3);
  check(
    prefill(
      model,
      st,
      tokens.map((s) => s.slice(0, p1)),
    ).logits,
    p1 - 1,
    "prefill",
  );
  check(
    prefill(
      model,
      st,
      tokens.map((s) => s.slice(p1, p2)),
    ).logits,
    p2 - 1,
    "second prefill",
  );
  for (let t = p2; t < T; t++)
    check(
      decodeStep(
        model,
        st,
        tokens.map((s) => s[t]!),
      ).logits,
      t,
      "decodeStep",
    );
  return compared;
}

describe("golden cases, portable: prefill, prefill from carried state, decodeStep", () => {
  it("finds the whole-model cases", () => expect(cases.length).toBeGreaterThanOrEqual(6));
  for (const name of cases)
    it(`${name}: every loop step's logits match the reference`, () => {
      expect(decodeCase(name)).toBeGreaterThan(0);
    });
});

const builds = [
  await enableNativeTensorKernels(),
  await enableNativeSsmKernels(),
  await enableNativeAttentionKernels(),
];
disableNativeTensorKernels();
disableNativeSsmKernels();
disableNativeAttentionKernels();

describe.runIf(nativeSuiteRuns("golden decoding on native kernels", ...builds))(
  "golden cases, native: prefill, prefill from carried state, decodeStep",
  () => {
    beforeAll(async () => {
      for (const r of [
        await enableNativeTensorKernels(),
        await enableNativeSsmKernels(),
        await enableNativeAttentionKernels(),
      ])
        if (!r.ok) throw new Error(r.error);
    });
    afterAll(() => {
      disableNativeTensorKernels();
      disableNativeSsmKernels();
      disableNativeAttentionKernels();
    });
    for (const name of cases)
      it(`${name}: every loop step's logits match the reference`, () => {
        const { calls } = withNativeCalls(kernelProfile, () => decodeCase(name));
        const cfg = JSON.parse(readFileSync(goldenPath(name, "config.json"), "utf8")) as {
          backbone: string;
        };
        const want = ["tensor/sgemm"];
        if (cfg.backbone !== "transformer") want.push("mamba2Step/step", "ssd/forward");
        if (cfg.backbone !== "mamba") want.push("attention/flashFwd", "attention/rope");
        if (cfg.backbone === "transformer") want.push("attention/swigluFwd");
        expect(calls).toEqual(expect.arrayContaining(want));
      });
  },
);
