/**
 * Training, evaluation and generation on two CPU backends side by side in one process: native
 * is started, then portable (which empties the process-wide kernel-set registry), and both stay
 * alive. What each computes alone (training a tiny hybrid model through `trainJob`, the library
 * function of `looplm train`, with evaluation during training; `evaluateOnBackend`; `generate`)
 * must come out bit for bit the same when the two run interleaved (`Promise.all`: the training
 * loops alternate step by step), once with the registry empty and once with it holding the
 * native kernels again; and the two backends' numbers must differ, so the kernels each ran were
 * really its own. Generation's tokens cannot show that (greedy tokens rarely differ), so
 * `runGenerate` is also run on a backend whose GEMM counts its calls, with the registry holding
 * another. Turning the wrapping off (the `withKernels` of `Trainer.trainStep`, of `evaluateWith`,
 * of `generate`) fails this test, as was checked once for each. Skipped with one printed line
 * where the native kernels cannot be built, a failure under CI.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate, LoopedModel, parseConfig } from "@loop/looped";
import { loadCheckpoint, saveCheckpoint } from "@loop/looped/node";
import { pHop } from "@loop/tasks";
import { nativeKernelNames } from "@loop/tensor/kernel";
import { countingGemm, nativeSuiteRuns, tinyModelConfig } from "@loop/test-support";
import { resolveTrainOptions } from "@loop/train";
import { afterAll, describe, expect, it, vi } from "vitest";
import { type ComputeBackend, startBackend } from "./backend.js";
import { runGenerate } from "./cli/commands/generate.js";
import { trainJob } from "./cli/run-training.js";
import { evaluateOnBackend } from "./device-eval.js";

const started = await startBackend("native").catch((e: Error) => e);
const native = started instanceof Error ? null : started;
const runs = nativeSuiteRuns(
  "training, evaluation and generation on portable and native side by side",
  started instanceof Error ? { ok: false, error: started.message } : { ok: true },
);

const task = pHop({ alphabet: 3, length: 12, hops: 2 });
// a Mamba-2 layer and an attention layer: the ssd, ssm, attention and tensor kernel groups
const config = parseConfig(
  tinyModelConfig(task.vocabSize, { n_layers: 2, backbone: "hybrid", attn_layers: [1] }),
);
const train = resolveTrainOptions({
  steps: 4,
  batchSize: 4,
  lr: 1e-2,
  warmupSteps: 0,
  seed: 1,
  evalEvery: 2,
  checkpointEvery: 0,
});
const evalBatches = task.evalSet({ count: 16, batchSize: 8 });
const prompt = [0, 1, 2, 1, 0];

const root = mkdtempSync(join(tmpdir(), "looplm-two-cpu-"));
// one fixed model that every backend evaluates and decodes
const fixed = join(root, "fixed");
saveCheckpoint(fixed, new LoopedModel(config, { seed: 5 }));

interface Outcome {
  losses: number[];
  /** Each evaluation during training (its per-step metric). */
  evals: number[][];
  weights: Buffer;
  /** The fixed model's NLL per loop step on `evalBatches`. */
  nll: number[];
  tokens: number[];
}

const bytes = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

let runCount = 0;
async function outcome(b: ComputeBackend): Promise<Outcome> {
  const runDir = join(root, `${b.name}-${runCount++}`);
  const res = await trainJob({
    runDir,
    task,
    taskInfo: {},
    config,
    train,
    evalCount: 16,
    backend: b,
    resume: false,
    label: b.name,
  });
  const log = readFileSync(join(runDir, "log.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { loss: number; eval?: { per_step: number[] } });
  const ev = await evaluateOnBackend(b, loadCheckpoint(fixed), evalBatches, "ppl");
  const gen = { maxNewTokens: 6, temperature: 0, kernels: b.kernels };
  return {
    losses: log.map((r) => r.loss),
    evals: log.flatMap((r) => (r.eval ? [r.eval.per_step] : [])),
    weights: Buffer.concat(res.model.parameters().map((p) => bytes(p.tensor.data))),
    nll: ev.steps.map((s) => ("nll" in s ? s.nll : Number.NaN)),
    tokens: generate(loadCheckpoint(fixed), prompt, gen).tokens,
  };
}

/** `fn` with the progress lines of training silenced. */
async function quiet<R>(fn: () => Promise<R>): Promise<R> {
  vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  try {
    return await fn();
  } finally {
    vi.restoreAllMocks();
  }
}

function expectSame(got: Outcome, want: Outcome, what: string): void {
  expect(got.losses, `${what} losses`).toEqual(want.losses);
  expect(got.evals, `${what} evaluations during training`).toEqual(want.evals);
  expect(got.weights.equals(want.weights), `${what} weights`).toBe(true);
  expect(got.nll, `${what} evaluation`).toEqual(want.nll);
  expect(got.tokens, `${what} generated tokens`).toEqual(want.tokens);
}

/** A backend whose GEMM (that of `b`) counts its calls. */
function counting(b: ComputeBackend): { backend: ComputeBackend; calls: () => number } {
  const { kernels, calls } = countingGemm(b.kernels);
  return { backend: { ...b, kernels }, calls };
}

describe.runIf(runs)("portable and native in one process: training, evaluation, generation", () => {
  afterAll(() => {
    native?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("each backend computes its own numbers, alone or interleaved with the other", async () => {
    const alone = { native: await quiet(() => outcome(native!)) } as Record<string, Outcome>;
    const portable = await startBackend("portable");
    expect(nativeKernelNames()).toEqual([]);
    alone.portable = await quiet(() => outcome(portable));
    // the two backends' kernels give other bits (else this test could not fail)
    expect(alone.native!.weights.equals(alone.portable!.weights)).toBe(false);
    expect(alone.native!.nll).not.toEqual(alone.portable!.nll);
    // side by side with the registry empty (portable's), then holding the native kernels
    for (const registry of ["portable", "native"]) {
      const again = registry === "native" ? await startBackend("native") : null;
      expect(nativeKernelNames().length > 0).toBe(registry === "native");
      const [n, p] = await quiet(() => Promise.all([outcome(native!), outcome(portable)]));
      expectSame(n, alone.native!, `native beside portable (registry ${registry})`);
      expectSame(p, alone.portable!, `portable beside native (registry ${registry})`);
      again?.stop();
    }
    expect(nativeKernelNames()).toEqual([]);
    portable.stop();
  });

  it("looplm generate decodes on its backend's kernels, not the registry's", async () => {
    const { backend, calls } = counting(native!);
    const out = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    try {
      const f = { model: fixed, tokens: prompt.join(","), maxNew: 4 };
      await runGenerate({ ...f, temperature: 0, topK: 0, seed: 0 }, backend);
    } finally {
      out.mockRestore();
    }
    expect(calls()).toBeGreaterThan(0);
  });
});
