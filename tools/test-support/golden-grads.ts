/**
 * A kernel case's inputs as gradient-tracking leaves, and every input gradient compared with the
 * reference's after backpropagating its `dy`: the gradient half of the golden kernel suites.
 */
import { backward, Tensor } from "@loop/tensor";
import { expectGolden, type KernelCase } from "./golden.js";

/** The case's tensors `names` as leaves that collect gradients, by name. */
export const goldenLeaves = (c: KernelCase, names: readonly string[]) =>
  Object.fromEntries(
    names.map((n) => [n, new Tensor(c.copy(n), [...c.get(n).shape], true)]),
  ) as Record<string, Tensor>;

/** Backpropagate the case's `dy` from `y`; each leaf in `names` must match `grad.<name>`. */
export function expectGoldenGrads(
  c: KernelCase,
  y: Tensor,
  t: Record<string, Tensor>,
  names: readonly string[],
): void {
  backward(y, [c.get("dy").data]);
  for (const n of names) expectGolden(`grad.${n}`, t[n]!.grad!, c.get(`grad.${n}`).data, "grad");
}
