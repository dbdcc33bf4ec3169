/**
 * Test support: a golden case through `looplm forward` on a backend, and the one comparison of
 * its outputs with what they should be (a golden
 * file, or another backend's outputs), so every backend's golden test holds them to the same
 * rule: the same names and shapes, exit steps exactly, every other tensor within the
 * docs/formats.md tolerance of its kind. It returns one message per difference, so a failing
 * case names all of them at once.
 */
import { readSafetensorsFile } from "@loop/tensor/node";
import { compareGolden, goldenPath, loadGolden } from "@loop/test-support";
import { expect } from "vitest";
import type { ComputeBackend } from "../backend.js";
import { runForward } from "../cli/commands/forward.js";

interface Named {
  data: ArrayLike<number>;
  shape: readonly number[];
}

/** Every way `got` differs from `want` (shapes are asserted, naming the tensor). */
export function outputFailures(got: Map<string, Named>, want: Map<string, Named>): string[] {
  const failures: string[] = [];
  for (const [key, exp] of want) {
    const act = got.get(key);
    if (!act) {
      failures.push(`${key}: missing`);
      continue;
    }
    expect(act.shape, key).toEqual(exp.shape);
    if (key.startsWith("exit.step.")) {
      if (Array.from(act.data).join(",") !== Array.from(exp.data).join(","))
        failures.push(`${key}: exit steps differ`);
      continue;
    }
    const r = compareGolden(key, act.data, exp.data, key.startsWith("grad.") ? "grad" : "forward");
    if (!r.ok) failures.push(r.message);
  }
  for (const key of got.keys()) if (!want.has(key)) failures.push(`${key}: not expected`);
  return failures;
}

/** Golden case `name` through `looplm forward` on `backend`, written to `out`: what it wrote. */
export async function forwardOutputs(name: string, out: string, backend: ComputeBackend) {
  await runForward(
    { model: goldenPath(name), input: goldenPath(name, "inputs.json"), out },
    backend,
  );
  return readSafetensorsFile(out).tensors;
}

/** Golden case `name` on `backend` (written to `out`) gives the case's golden outputs. */
export async function expectGoldenOutputs(
  name: string,
  out: string,
  backend: ComputeBackend,
): Promise<void> {
  const got = await forwardOutputs(name, out, backend);
  expect(outputFailures(got, loadGolden(name, "outputs.safetensors"))).toEqual([]);
}
