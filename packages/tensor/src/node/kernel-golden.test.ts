/**
 * The generic ops of the model against the independent PyTorch reference
 * (testdata/golden/kernels: rmsnorm, cross-entropy, embedding, adamw; tools/golden generates
 * them), forward and every input gradient, on the portable kernels and on the native ones
 * (native/tensor.c; each native case also asserts which native kernels ran). Tolerances:
 * docs/formats.md "Golden vectors".
 */

import { expectGolden, goldenGrads, goldenKernelSuites, loadKernelCase } from "@loop/test-support";
import { backward } from "../autograd/backward.js";
import { embedding } from "../ops/embedding.js";
import { crossEntropy } from "../ops/loss.js";
import { rmsnorm } from "../ops/rmsnorm.js";
import { AdamW } from "../optim/adamw.js";
import { IntTensor, Tensor } from "../tensor.js";
import * as kernelProfile from "./kernel-profile.js";
import { disableNativeTensorKernels, enableNativeTensorKernels } from "./native.js";

const { expectGoldenGrads, goldenLeaves } = goldenGrads(Tensor, backward);

const leaf = (data: Float32Array, shape: readonly number[]) => new Tensor(data, [...shape], true);

function rmsnormCase(): void {
  const c = loadKernelCase("rmsnorm");
  const t = goldenLeaves(c, ["x", "weight"]);
  const y = rmsnorm(t.x!, t.weight!, c.spec.settings.eps as number);
  expectGolden("y", y.data, c.get("y").data, "forward");
  expectGoldenGrads(c, y, t, ["x", "weight"]);
}

function crossEntropyCase(): void {
  const c = loadKernelCase("cross-entropy");
  const t = goldenLeaves(c, ["logits"]);
  const targets = new IntTensor(c.ints("targets"), c.get("targets").shape);
  const loss = crossEntropy(t.logits!, targets);
  expectGolden("y", loss.data, c.get("y").data, "forward");
  expectGoldenGrads(c, loss, t, ["logits"]);
}

function embeddingCase(): void {
  const c = loadKernelCase("embedding");
  const ids = new IntTensor(c.ints("ids"), c.get("ids").shape);
  const t = goldenLeaves(c, ["weight"]);
  const y = embedding(ids, t.weight!);
  expectGolden("y", y.data, c.get("y").data, "forward");
  expectGoldenGrads(c, y, t, ["weight"]);
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

await goldenKernelSuites(
  "rmsnorm, cross-entropy, embedding, adamw",
  cases,
  {
    what: "tensor kernels",
    source: "native/tensor.c",
    enable: enableNativeTensorKernels,
    disable: disableNativeTensorKernels,
  },
  kernelProfile,
);
