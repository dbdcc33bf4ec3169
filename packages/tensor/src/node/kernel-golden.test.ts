/**
 * The generic ops of the model against the independent PyTorch reference
 * (testdata/golden/kernels: rmsnorm, cross-entropy, embedding, adamw; tools/golden generates
 * them), forward and every input gradient, on the portable kernels and on the native ones
 * (native/tensor.c; each native case also asserts which native kernels ran). Tolerances:
 * docs/formats.md "Golden vectors".
 */

import {
  expectGolden,
  loadKernelCase,
  nativeGoldenCases,
  nativeSuiteRuns,
} from "@loop/test-support";
import { describe, it } from "vitest";
import { backward } from "../autograd/backward.js";
import { embedding } from "../ops/embedding.js";
import { crossEntropy } from "../ops/loss.js";
import { rmsnorm } from "../ops/rmsnorm.js";
import { AdamW } from "../optim/adamw.js";
import { IntTensor, Tensor } from "../tensor.js";
import * as kernelProfile from "./kernel-profile.js";
import {
  disableNativeTensorKernels,
  enableNativeTensorKernels,
  tensorNativeSource,
} from "./native.js";
import { buildNativeAddon } from "./native-addon.js";

const leaf = (data: Float32Array, shape: readonly number[]) => new Tensor(data, [...shape], true);

function rmsnormCase(): void {
  const c = loadKernelCase("rmsnorm");
  const x = leaf(c.copy("x"), c.get("x").shape);
  const w = leaf(c.copy("weight"), c.get("weight").shape);
  const y = rmsnorm(x, w, c.spec.settings.eps as number);
  expectGolden("y", y.data, c.get("y").data, "forward");
  backward(y, [c.get("dy").data]);
  expectGolden("grad.x", x.grad!, c.get("grad.x").data, "grad");
  expectGolden("grad.weight", w.grad!, c.get("grad.weight").data, "grad");
}

function crossEntropyCase(): void {
  const c = loadKernelCase("cross-entropy");
  const logits = leaf(c.copy("logits"), c.get("logits").shape);
  const targets = new IntTensor(c.ints("targets"), c.get("targets").shape);
  const loss = crossEntropy(logits, targets);
  expectGolden("y", loss.data, c.get("y").data, "forward");
  backward(loss, [c.get("dy").data]);
  expectGolden("grad.logits", logits.grad!, c.get("grad.logits").data, "grad");
}

function embeddingCase(): void {
  const c = loadKernelCase("embedding");
  const ids = new IntTensor(c.ints("ids"), c.get("ids").shape);
  const w = leaf(c.copy("weight"), c.get("weight").shape);
  const y = embedding(ids, w);
  expectGolden("y", y.data, c.get("y").data, "forward");
  backward(y, [c.get("dy").data]);
  expectGolden("grad.weight", w.grad!, c.get("grad.weight").data, "grad");
}

function adamwCase(): void {
  const c = loadKernelCase("adamw");
  const s = c.spec.settings as {
    lr: number;
    beta1: number;
    beta2: number;
    eps: number;
    weight_decay: number;
    steps: number;
    decay: Record<string, boolean>;
  };
  const names = Object.keys(s.decay);
  const params = names.map((name) => ({
    name,
    tensor: leaf(c.copy(name), c.get(name).shape),
    decay: s.decay[name]!,
  }));
  const opt = new AdamW(params, {
    lr: s.lr,
    beta1: s.beta1,
    beta2: s.beta2,
    eps: s.eps,
    weightDecay: s.weight_decay,
  });
  for (let step = 1; step <= s.steps; step++) {
    for (const p of params) p.tensor.grad = c.copy(`g.${p.name}.step${step}`);
    opt.step();
    for (const p of params)
      expectGolden(
        `${p.name}.step${step}`,
        p.tensor.data,
        c.get(`${p.name}.step${step}`).data,
        "forward",
      );
  }
  const state = opt.getState();
  for (const n of names) {
    expectGolden(`m.${n}`, state.m[n]!, c.get(`m.${n}`).data, "forward");
    expectGolden(`v.${n}`, state.v[n]!, c.get(`v.${n}`).data, "forward");
  }
}

const cases: [string, () => void, string[]][] = [
  ["rmsnorm", rmsnormCase, ["tensor/rmsnormBwd", "tensor/rmsnormFwd"]],
  ["cross-entropy", crossEntropyCase, ["tensor/ceBwd", "tensor/ceFwd"]],
  ["embedding", embeddingCase, ["tensor/embeddingBwd"]],
  ["adamw", adamwCase, ["tensor/adamw"]],
];

describe("golden kernels, portable: rmsnorm, cross-entropy, embedding, adamw", () => {
  for (const [name, run] of cases) it(`${name} matches the reference, forward and gradients`, run);
});

const built = await buildNativeAddon("tensor", tensorNativeSource);

describe.runIf(nativeSuiteRuns("golden kernels, native tensor kernels", built))(
  "golden kernels, native (native/tensor.c)",
  () =>
    nativeGoldenCases(
      { enable: enableNativeTensorKernels, disable: disableNativeTensorKernels },
      kernelProfile,
      cases,
    ),
);
