/**
 * Every whole-model golden case (testdata/golden/<case>) through the same code path as
 * `looplm forward`: load the checkpoint folder, parse inputs.json, compute all outputs, and match
 * every tensor of outputs.safetensors within the docs/formats.md tolerance (exit steps exactly) —
 * once on the portable kernels and once on the native ones (when this machine can build them).
 */
import { readdirSync, readFileSync } from "node:fs";
import { loadCheckpoint } from "@loop/looped/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareGolden, goldenPath, loadGolden } from "../../../../tools/test-support/golden.js";
import { disableNativeKernels, enableNativeKernels, type NativeReport } from "../native.js";
import { parseForwardInputs } from "./inputs.js";
import { forwardOutputs } from "./outputs.js";

const cases = readdirSync(goldenPath()).filter((d) => d !== "kernels");

function checkCase(name: string): void {
  const model = loadCheckpoint(goldenPath(name));
  const inputs = parseForwardInputs(
    JSON.parse(readFileSync(goldenPath(name, "inputs.json"), "utf8")),
    model.config.vocab_size,
  );
  const got = forwardOutputs(model, inputs);
  const want = loadGolden(name, "outputs.safetensors");
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
    const kind = key.startsWith("grad.") ? "grad" : "forward";
    const r = compareGolden(key, act.data, exp.data, kind);
    if (!r.ok) failures.push(r.message);
  }
  for (const key of got.keys()) if (!want.has(key)) failures.push(`${key}: not in the golden file`);
  expect(failures).toEqual([]);
}

describe("whole-model golden vectors, portable kernels", () => {
  it("finds the golden cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(6);
  });
  for (const name of cases) it(name, () => checkCase(name));
});

describe("whole-model golden vectors, native kernels", () => {
  let native: NativeReport;
  beforeAll(async () => {
    native = await enableNativeKernels();
  });
  afterAll(() => disableNativeKernels());
  it("native kernels build here, or say why not", () => {
    if (native.enabled) expect(native.kernels).toContain("tensor/sgemm");
    else expect(native.reason?.length).toBeGreaterThan(0);
  });
  // (without a compiler these repeat the portable run: the engine then has nothing else)
  for (const name of cases) it(name, () => checkCase(name));
});
