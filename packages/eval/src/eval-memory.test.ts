/**
 * An evaluation holds one batch's outputs at a time: inside one pooled scope (as during
 * training, where the evaluation runs in the step's scratch scope) the pooled memory after 2
 * batches and after 16 is the same, and the numbers are those computed without a scope.
 */
import { pHop } from "@loop/tasks";
import { noGrad, releaseScratch, withScratch } from "@loop/tensor";
import { scratchBytes } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { evaluateAccuracy } from "./accuracy.js";
import { tinyLoopedModel } from "./helpers.test-util.js";
import { evaluatePerplexity } from "./perplexity.js";

const task = pHop({ alphabet: 3, length: 10, hops: 1 });

describe("evaluation memory", () => {
  it("is one batch's, whatever the count", async () => {
    const model = tinyLoopedModel({ gate: true });
    for (const evaluate of [evaluateAccuracy, evaluatePerplexity]) {
      const pooled = async (count: number) => {
        const batches = task.evalSet({ count, batchSize: 64 });
        releaseScratch();
        const r = await noGrad(() => withScratch(() => evaluate(model, batches, { qs: [0.5] })));
        return { bytes: scratchBytes(), r, plain: await evaluate(model, batches, { qs: [0.5] }) };
      };
      const two = await pooled(128);
      const many = await pooled(1024);
      // a batch of 64 rows of 10 tokens does use the pool ...
      expect(two.bytes).toBeGreaterThan(0);
      // ... and gives it back before the next batch
      expect(many.bytes).toBe(two.bytes);
      expect(many.r).toEqual(many.plain);
    }
  });
});
