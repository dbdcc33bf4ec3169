/**
 * A kernel case's inputs as gradient-tracking leaves, and every input gradient compared with the
 * reference's after backpropagating its `dy`: the gradient half of the golden kernel suites.
 * The test passes in @loop/tensor's `Tensor` and `backward` (this package sits below it).
 */
import { expectGolden, type KernelCase } from "./golden.js";

/** A leaf of @loop/tensor: its gradient after a backward pass. */
export interface GradLeaf {
  grad: Float32Array | null;
}

/** `goldenLeaves` and `expectGoldenGrads` on the tensors of `Leaf`, backpropagated by `backward`. */
export function goldenGrads<T extends GradLeaf>(
  Leaf: new (data: Float32Array, shape: number[], requiresGrad: boolean) => T,
  backward: (y: T, seeds: Float32Array[]) => unknown,
) {
  return {
    /** The case's tensors `names` as leaves that collect gradients, by name. */
    goldenLeaves: (c: KernelCase, names: readonly string[]) =>
      Object.fromEntries(
        names.map((n) => [n, new Leaf(c.copy(n), [...c.get(n).shape], true)]),
      ) as Record<string, T>,
    /** Backpropagate the case's `dy` from `y`; each leaf in `names` must match `grad.<name>`. */
    expectGoldenGrads(c: KernelCase, y: T, t: Record<string, T>, names: readonly string[]): void {
      backward(y, [c.get("dy").data]);
      for (const n of names)
        expectGolden(`grad.${n}`, t[n]!.grad!, c.get(`grad.${n}`).data, "grad");
    },
  };
}
