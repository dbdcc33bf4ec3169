/*
 * The decode cases of `looplm check`: each whole-model golden case (golden-check.ts) decoded
 * token by token on the backend through the decoders written once for every backend
 * (@loop/looped `deviceDecodeToken`, the state on the backend), every position's last-step
 * logits compared with the golden forward's `logits.step{R}` at that position (a causal model's
 * logits at position t do not depend on how the tokens before it entered) within the
 * docs/formats.md forward tolerance.
 */
import { join } from "node:path";
import {
  deviceDecodeToken,
  disposeDeviceDecodeState,
  hasDecodeOps,
  initDeviceDecodeState,
  toDevice,
} from "@loop/looped";
import { loadCheckpoint } from "@loop/looped/node";
import { readJsonFile, readSafetensorsFile } from "@loop/tensor/node";
import type { ComputeBackend } from "../backend.js";
import { checkModelRun } from "../cli/memory-need.js";
import { parseForwardInputs } from "../forward/inputs.js";
import type { CaseResult, Worst } from "./op-conformance.js";
import { timedCase, worstOf, worstOfAll } from "./op-conformance.js";

const GOLDEN_TOL = { atol: 1e-4, rtol: 1e-4 };

/** Golden case `name` decoded on `backend`: the worst position against the tolerance. */
export async function checkGoldenDecode(
  dir: string,
  name: string,
  backend: ComputeBackend,
): Promise<CaseResult> {
  return timedCase({ name: `decode ${name}`, op: "decode", tol: GOLDEN_TOL }, async () => {
    const ops = backend.ops;
    if (!hasDecodeOps(ops)) throw new Error(`--backend ${backend.name} has no decode kernels`);
    const model = loadCheckpoint(join(dir, name), {
      checkConfig: (cfg) => checkModelRun(cfg, { command: "check", forwardTokens: 1 }),
    });
    const { tokens } = parseForwardInputs(
      readJsonFile(join(dir, name, "inputs.json")),
      model.config.vocab_size,
    );
    const { n_loops: R, vocab_size: V } = model.config;
    const want = readSafetensorsFile(join(dir, name, "outputs.safetensors")).tensors.get(
      `logits.step${R}`,
    );
    if (!want) throw new Error(`${name}: outputs.safetensors has no logits.step${R}`);
    const [B, T] = tokens.shape as [number, number];
    const dm = toDevice(model, ops);
    const st = initDeviceDecodeState(ops, dm, B, T);
    const all: Worst[] = [];
    try {
      for (let t = 0; t < T; t++) {
        const ids = Array.from({ length: B }, (_v, b) => tokens.data[b * T + t]!);
        const got = (await deviceDecodeToken(ops, dm, st, ids, null)).logits;
        const gold = new Float32Array(B * V);
        for (let b = 0; b < B; b++)
          gold.set(want.data.subarray((b * T + t) * V, (b * T + t + 1) * V), b * V);
        all.push(worstOf(`logits.step${R} position ${t}`, got, gold, GOLDEN_TOL));
        ops.releaseTransients();
      }
    } finally {
      disposeDeviceDecodeState(ops, st);
      dm.dispose();
    }
    return worstOfAll(all);
  });
}
