/*
 * The golden cases of `looplm check`: each whole-model case (a folder with config.json,
 * model.safetensors, inputs.json, outputs.safetensors, made by an independent PyTorch
 * implementation; docs/formats.md) through `looplm forward`'s computation on the backend, every
 * output compared with the docs/formats.md tolerance: forward |a − b| ≤ 1e-4 + 1e-4·|b|,
 * gradients the same after dividing both by the tensor's largest |b|, exit steps exactly.
 * The folder is the repository's testdata/golden, or the offline bundle's golden/.
 */
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadCheckpoint } from "@loop/looped/node";
import { readJsonFile, readSafetensorsFile } from "@loop/tensor/node";
import type { ComputeBackend } from "../backend.js";
import { checkModelRun } from "../cli/memory-need.js";
import { parseForwardInputs } from "../forward/inputs.js";
import { forwardOutputs } from "../forward/outputs.js";
import type { CaseResult, Worst } from "./op-conformance.js";
import { timedCase, worstOf, worstOfAll } from "./op-conformance.js";

/** The golden tolerance of docs/formats.md. */
const GOLDEN_TOL = { atol: 1e-4, rtol: 1e-4 };

/**
 * The golden folder: LOOPLM_GOLDEN_DIR (the bundle's launcher sets it), else testdata/golden in
 * a folder above this file (a checkout), else null.
 */
export function findGoldenDir(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.LOOPLM_GOLDEN_DIR) return env.LOOPLM_GOLDEN_DIR;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, "testdata", "golden");
    if (existsSync(join(candidate, "MANIFEST.json"))) return candidate;
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/** The whole-model cases in `dir`: its folders holding a config.json. */
export function goldenCases(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(dir, e.name, "config.json")))
    .map((e) => e.name)
    .sort();
}

function scaled(data: Float32Array, by: Float32Array): Float32Array {
  let m = 0;
  for (const v of by) m = Math.max(m, Math.abs(v));
  const s = m > 0 ? 1 / m : 1;
  return data.map((v) => v * s);
}

/** One golden case on `backend`: the worst output against the tolerance. */
export async function checkGoldenCase(
  dir: string,
  name: string,
  backend: ComputeBackend,
): Promise<CaseResult> {
  return timedCase({ name: `golden ${name}`, op: "forward", tol: GOLDEN_TOL }, async () => {
    // (a case whose config asks for more than the machine holds fails as that case, at once)
    const model = loadCheckpoint(join(dir, name), {
      checkConfig: (cfg) => checkModelRun(cfg, { command: "check", forwardTokens: 1 }),
    });
    const raw = readJsonFile(join(dir, name, "inputs.json"));
    const got = await forwardOutputs(
      backend.ops,
      model,
      parseForwardInputs(raw, model.config.vocab_size),
    );
    const want = readSafetensorsFile(join(dir, name, "outputs.safetensors")).tensors;
    const all: Worst[] = [];
    for (const [key, exp] of want) {
      const act = got.get(key);
      if (!act) {
        all.push({ what: `${key} missing`, ratio: Infinity, index: -1, got: NaN, want: NaN });
        continue;
      }
      if (key.startsWith("exit.step.")) {
        const same =
          act.data.every((v, i) => v === exp.data[i]) && act.data.length === exp.data.length;
        all.push({ what: key, ratio: same ? 0 : Infinity, index: -1, got: NaN, want: NaN });
        continue;
      }
      const grad = key.startsWith("grad.");
      all.push(
        grad
          ? worstOf(key, scaled(act.data, exp.data), scaled(exp.data, exp.data), GOLDEN_TOL)
          : worstOf(key, act.data, exp.data, GOLDEN_TOL),
      );
    }
    return worstOfAll(all);
  });
}
