import { intTensor, noGrad } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { tableModel, tinyLoopedModel } from "../helpers.test-util.js";
import { logProbAt } from "../log-prob.js";
import type { LoglikRequest } from "./harness-encode.js";
import { modelLoglikelihoods } from "./model-loglik.js";

/*
 * A bigram stand-in: readout(r) at a position is TABLE[r][token] (D = V, identity head), so
 * log p(next | prefix) under step r = log softmax(TABLE[r][prev])[next], known in closed form.
 */
const V = 4;
const TABLE = [
  [
    [0, 1, 2, 3],
    [3, 0, 0, 0],
    [0, 0, 5, 0],
    [1, 1, 1, 1],
  ],
  [
    [2, 0, 0, 0],
    [0, 4, 0, 1],
    [0, 1, 0, 2],
    [0, 0, 3, 0],
  ],
];
const bigram = tableModel(2, V, (r, tokens) => {
  const out = new Float32Array(tokens.length * V);
  tokens.forEach((tk, i) => {
    out.set(TABLE[r - 1]![tk]!, i * V);
  });
  return out;
});

function expected(r: number, req: LoglikRequest): number {
  const all = [...req.input, req.continuation[req.continuation.length - 1]!];
  const start = req.input.length - req.continuation.length;
  let s = 0;
  for (let j = 0; j < req.continuation.length; j++)
    s += logProbAt(Float64Array.from(TABLE[r]![all[start + j]!]!), 0, V, req.continuation[j]!);
  return s;
}

const req = (input: number[], continuation: number[]): LoglikRequest => ({
  input: Int32Array.from(input),
  continuation: Int32Array.from(continuation),
});

const REQS = [
  req([0, 1, 2], [2, 3]),
  req([3], [0]),
  req([1, 2, 3, 0, 1], [1]),
  req([2, 2], [2, 2]),
];

describe("modelLoglikelihoods", () => {
  it("sums log p of the continuation ids under every loop step", () => {
    const got = modelLoglikelihoods(bigram, REQS, { batchSize: 3 });
    expect(got).toHaveLength(2);
    for (let r = 0; r < 2; r++)
      REQS.forEach((q, i) => {
        expect(got[r]![i]).toBeCloseTo(expected(r, q), 6);
      });
  });

  it("gives the same values for any batch size and padding id", () => {
    const a = modelLoglikelihoods(bigram, REQS, { batchSize: 1 });
    const b = modelLoglikelihoods(bigram, REQS, { batchSize: 4, padId: 3 });
    expect(b).toEqual(a);
  });

  it("rejects bad requests", () => {
    expect(() => modelLoglikelihoods(bigram, [req([1], [1, 2])])).toThrow(
      /requests\[0\]: continuation must have 1..1 tokens/,
    );
    expect(() => modelLoglikelihoods(bigram, [req([1, 7], [1])])).toThrow(
      /requests\[0\]: token 7 is outside the model's vocab \[0, 4\)/,
    );
    expect(() => modelLoglikelihoods(bigram, REQS, { batchSize: 0 })).toThrow(/batchSize/);
  });
});

describe("modelLoglikelihoods (tiny looped Mamba-2)", () => {
  it("right padding in a batch changes nothing; matches the full logits of each request", () => {
    const m = tinyLoopedModel({ loops: 2 });
    const reqs = [
      req([1, 5, 9, 13, 2, 7], [2, 7]),
      req([4, 4], [4]),
      req([30, 31, 0, 11, 19, 21, 3, 3, 8], [3, 3, 8]),
    ];
    const batched = modelLoglikelihoods(m, reqs, { batchSize: 3 });
    reqs.forEach((q, i) => {
      const T = q.input.length;
      const logits = noGrad(() => m.forward(intTensor(q.input, [1, T]), { steps: "all" })).logits;
      logits.forEach((l, r) => {
        let s = 0;
        q.continuation.forEach((tk, j) => {
          s += logProbAt(l.data, T - q.continuation.length + j, 32, tk);
        });
        expect(batched[r]![i]).toBeCloseTo(s, 4);
      });
    });
  });
});
