import { gradcheck, intTensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { exitAtStep, selectLogits } from "./select-logits.js";

describe("selectLogits", () => {
  const logits = [0, 1, 2].map((r) => randn([2, 2, 4], 50 + r));
  const steps = intTensor([1, 3, 2, 3], [2, 2]);

  it("takes each token's row from its exit step", () => {
    const y = selectLogits(logits, steps);
    expect(y.shape).toEqual([2, 2, 4]);
    for (let m = 0; m < 4; m++) {
      const src = logits[steps.data[m]! - 1]!.data;
      expect(Array.from(y.data.subarray(m * 4, m * 4 + 4))).toEqual(
        Array.from(src.subarray(m * 4, m * 4 + 4)),
      );
    }
  });

  it("gradient routes to the chosen step only", () => {
    gradcheck(() => selectLogits(logits, steps), logits);
    // Step 1 was chosen only at token 0.
    expect(logits[0]!.grad!.subarray(4).every((g) => g === 0)).toBe(true);
  });

  it("rejects bad steps naming the argument", () => {
    expect(() => selectLogits(logits, intTensor([1, 4, 1, 1], [2, 2]))).toThrow(
      /steps\[1\] is 4, expected a step in \[1, 3\]/,
    );
    expect(() => selectLogits(logits, intTensor([1, 1], [2]))).toThrow(
      /steps has shape \[2\], expected \[2,2\]/,
    );
  });
});

describe("exitAtStep", () => {
  it("returns step r's logits", () => {
    const logits = [randn([1, 2], 1), randn([1, 2], 2)];
    expect(exitAtStep(logits, 2)).toBe(logits[1]);
    expect(() => exitAtStep(logits, 0)).toThrow(/step must be an integer in \[1, 2\], got 0/);
  });
});
