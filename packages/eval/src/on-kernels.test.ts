/**
 * The evaluators compute on the CPU kernels they are given (`kernels`, a backend's), not on the
 * registry's: given kernels whose GEMM counts its calls, every batch's forward calls it, and the
 * numbers are those of the same kernels installed in the registry. Without the `withKernels` of
 * `evaluateWith` or of `modelLoglikelihoods` the count stays 0 (checked once). Two real backends
 * side by side: looplm's two-cpu-backends.test.ts.
 */
import { pHop } from "@loop/tasks";
import { currentKernels } from "@loop/tensor/kernel";
import { countingGemm } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { evaluateAccuracy } from "./accuracy.js";
import { tinyLoopedModel } from "./helpers.test-util.js";
import { modelLoglikelihoods } from "./multiple-choice/model-loglik.js";
import { evaluatePerplexity } from "./perplexity.js";

/** The registry's kernels with a GEMM that counts its calls. */
const countingKernels = () => countingGemm(currentKernels());

const task = pHop({ alphabet: 3, length: 10, hops: 1 });
const batches = task.evalSet({ count: 8, batchSize: 4 });

describe("evaluation on given kernels", () => {
  it("every batch of evaluateAccuracy and evaluatePerplexity runs on them", async () => {
    const model = tinyLoopedModel({ gate: true });
    const opts = { qs: [0.5] };
    for (const evaluate of [evaluateAccuracy, evaluatePerplexity]) {
      const c = countingKernels();
      const on = await evaluate(model, batches, { ...opts, kernels: c.kernels });
      const calls = c.calls();
      expect(calls).toBeGreaterThan(0);
      // on the registry's kernels (the same GEMM, not counted): the same numbers
      expect(await evaluate(model, batches, opts)).toEqual(on);
      expect(c.calls()).toBe(calls);
    }
  });

  it("modelLoglikelihoods runs every forward on them", () => {
    const model = tinyLoopedModel();
    const req = (input: number[], continuation: number[]) => ({
      input: Int32Array.from(input),
      continuation: Int32Array.from(continuation),
    });
    const reqs = [req([1, 2, 3, 4], [3, 4]), req([5, 6, 7], [7])];
    const c = countingKernels();
    const on = modelLoglikelihoods(model, reqs, { batchSize: 1, kernels: c.kernels });
    const calls = c.calls();
    expect(calls).toBeGreaterThan(0);
    expect(modelLoglikelihoods(model, reqs, { batchSize: 1 })).toEqual(on);
    expect(c.calls()).toBe(calls);
  });
});
