/**
 * Two CPU backends side by side in one process: native is started, then portable (which empties
 * the process-wide kernel slot), and both stay alive. Every golden case's `forwardOutputs` on each
 * backend's `ops`, the two interleaved, must give the same bytes as that backend alone (the slot
 * holding its kernels, the plain CPU ops); and the two backends' outputs must differ somewhere,
 * so the kernels each ran were really its own. Skipped with one printed line where the native
 * kernels cannot be built, a failure under CI.
 */
import { readFileSync } from "node:fs";
import { cpuBackendOps } from "@loop/looped";
import { loadCheckpoint } from "@loop/looped/node";
import type { NamedArray } from "@loop/tensor";
import { nativeKernelNames } from "@loop/tensor/kernel";
import { goldenModelCases, goldenPath, nativeSuiteRuns } from "@loop/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { type ComputeBackend, startBackend } from "../backend.js";
import { parseForwardInputs } from "./inputs.js";
import { forwardOutputs } from "./outputs.js";

const started = await startBackend("native").catch((e: Error) => e);
const native = started instanceof Error ? null : started;
const runs = nativeSuiteRuns(
  "portable and native side by side",
  started instanceof Error ? { ok: false, error: started.message } : { ok: true },
);

const bytes = (a: NamedArray) => Buffer.from(a.data.buffer, a.data.byteOffset, a.data.byteLength);

async function outputs(name: string, ops: ComputeBackend["ops"]) {
  const model = loadCheckpoint(goldenPath(name));
  const raw = JSON.parse(readFileSync(goldenPath(name, "inputs.json"), "utf8"));
  return forwardOutputs(ops, model, parseForwardInputs(raw, model.config.vocab_size));
}

describe.runIf(runs)("portable and native in one process: each on its own kernels", () => {
  afterAll(() => native?.stop());

  it("forward gives each backend's own bytes, interleaved", async () => {
    const cases = goldenModelCases();
    const alone = new Map<string, Map<string, NamedArray>>();
    for (const name of cases) alone.set(`native ${name}`, await outputs(name, cpuBackendOps));
    const portable = await startBackend("portable");
    expect(nativeKernelNames()).toEqual([]);
    for (const name of cases) alone.set(`portable ${name}`, await outputs(name, cpuBackendOps));
    let differ = 0;
    for (const name of cases)
      for (const b of [native!, portable]) {
        const got = await outputs(name, b.ops);
        const want = alone.get(`${b.name} ${name}`)!;
        expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
        for (const [k, w] of want)
          expect(bytes(got.get(k)!).equals(bytes(w)), `${b.name} ${name} ${k}`).toBe(true);
        if (b === portable)
          for (const [k, w] of alone.get(`native ${name}`)!)
            if (!bytes(got.get(k)!).equals(bytes(w))) differ++;
      }
    expect(differ).toBeGreaterThan(0);
    expect(nativeKernelNames()).toEqual([]);
    portable.stop();
  });
});
