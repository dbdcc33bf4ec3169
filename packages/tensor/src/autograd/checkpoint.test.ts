import { describe, expect, it } from "vitest";
import { gradcheck } from "../gradcheck.js";
import { add } from "../ops/binary.js";
import { linear } from "../ops/matmul.js";
import { sum } from "../ops/reduce.js";
import { silu } from "../ops/unary.js";
import { randn } from "../random-tensor.js";
import { backward } from "./backward.js";
import { checkpoint } from "./checkpoint.js";

describe("checkpoint", () => {
  it("gives the same values and gradients as the plain graph, with shared weights", () => {
    const w = randn([4, 4], 1, { std: 0.4 });
    const x0 = randn([3, 4], 2);
    const block = (h: ReturnType<typeof randn>) => add(h, silu(linear(h, w)));
    const plain = () => block(block(block(x0)));
    const ck = () => checkpoint(block, checkpoint(block, checkpoint(block, x0, [w]), [w]), [w]);
    expect(Array.from(ck().data)).toEqual(Array.from(plain().data));
    backward(sum(plain()));
    const g1 = Float32Array.from(w.grad!);
    const gx1 = Float32Array.from(x0.grad!);
    w.grad = null;
    x0.grad = null;
    backward(sum(ck()));
    expect(Array.from(w.grad!)).toEqual(Array.from(g1));
    expect(Array.from(x0.grad!)).toEqual(Array.from(gx1));
    gradcheck(ck, [w, x0]);
  });
});
