/**
 * The page's model worker: it owns the model, trains it step by step (posting the loss and
 * periodic per-loop-step accuracy), loads checkpoints and inspects inputs. Training runs on the
 * engine's WebAssembly kernels, split over a Web Worker thread pool when the page is
 * cross-origin isolated, or on the GPU through WebGPU (the `webgpu` backend: @loop/train's
 * Trainer with a GPU step engine).
 */
import { DEFAULT_Q_SWEEP, evaluateAccuracy } from "@loop/eval";
import {
  countParameters,
  fromHfMamba2Config,
  isHfMamba2Config,
  LoopedModel,
  loadStateDict,
  parseConfig,
  parsePythonJson,
} from "@loop/looped";
import type { Task } from "@loop/tasks";
import { decodeSafetensors } from "@loop/tensor";
import { startWebWorkerPool, webPoolJobCount } from "@loop/tensor/web";
import { deviceStepEngine, deviceTraining, resolveTrainOptions, Trainer } from "@loop/train";
import { gpuBackendOps } from "@loop/webgpu";
import type { PageRequest, WorkerReply } from "../protocol.js";
import {
  buildConfig,
  buildTask,
  EVAL_BATCH,
  type Settings,
  type TaskSettings,
} from "../settings.js";
import { gpuContext, probeGpu } from "./gpu.js";
import { inspect, parseInput, sampleInput } from "./inspect.js";

const post = (msg: WorkerReply) => postMessage(msg);

let model: LoopedModel | null = null;
let task: Task | null = null;
let stopRequested = false;
let training = false;

function createPoolWorker(): Worker {
  return new Worker(new URL("./pool-worker.ts", import.meta.url), { type: "module" });
}

/** Let queued messages (stop, inspect) in between training steps. */
const yieldToMessages = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

function evaluate(m: LoopedModel, t: Task, count: number) {
  const qs = m.exitGate ? [...DEFAULT_Q_SWEEP] : [];
  const batches = t.evalSet({ count, batchSize: EVAL_BATCH });
  return evaluateAccuracy(m, batches, { qs, score: (b, p) => t.score(b, p) });
}

function announce(m: LoopedModel, taskSettings: TaskSettings, source: string): void {
  post({
    type: "model",
    info: {
      config: m.config,
      params: countParameters(m.config),
      taskName: task!.name,
      task: taskSettings,
      source,
    },
  });
}

async function train(s: Settings): Promise<void> {
  task = buildTask(s.task);
  const evalTask = task;
  model = new LoopedModel(buildConfig(s.model, task.vocabSize), { seed: s.train.seed });
  const m = model;
  const opts = resolveTrainOptions({
    stage: s.model.exitGate ? "gate1" : "pretrain",
    steps: s.train.steps,
    batchSize: s.train.batchSize,
    lr: s.train.lr,
    minLr: s.train.lr / 10,
    warmupSteps: Math.min(30, s.train.steps),
    seed: s.train.seed,
  });
  // On webgpu the steps run on the GPU model; the CPU model gets its weights back (`sync`)
  // before each evaluation and inspection.
  const engine =
    s.train.backend === "webgpu"
      ? deviceStepEngine(deviceTraining(m, gpuBackendOps(await gpuContext()), opts), opts)
      : null;
  announce(m, s.task, engine ? `trained here on ${engine.name}` : "trained here");
  const trainer = new Trainer(m, task, opts, engine);
  stopRequested = false;
  training = true;
  try {
    post({ type: "eval", step: 0, result: await evaluate(m, evalTask, s.train.evalCount) });
    while (!trainer.done && !stopRequested) {
      const r = await trainer.nextStep();
      post({
        type: "step",
        step: r.step,
        loss: r.loss,
        elapsed: r.elapsed_s,
        poolJobs: webPoolJobCount(),
      });
      if (r.step % s.train.evalEvery === 0 || trainer.done) {
        await trainer.sync();
        post({
          type: "eval",
          step: r.step,
          result: await evaluate(m, evalTask, s.train.evalCount),
        });
      }
      await yieldToMessages();
    }
    // stopped between evaluations: the model inspected from now on is the one trained
    if (stopRequested) await trainer.sync();
  } finally {
    training = false;
    engine?.dispose();
  }
  post({ type: "done", step: trainer.step, stopped: stopRequested });
}

async function load(req: Extract<PageRequest, { type: "load" }>): Promise<void> {
  let raw: unknown;
  try {
    // (as Python's json module writes it: transformers' files spell a limit Infinity)
    raw = parsePythonJson(req.config);
  } catch (e) {
    throw new Error(`config.json is not JSON: ${(e as Error).message}`);
  }
  const tensors = decodeSafetensors(new Uint8Array(req.weights)).tensors;
  let config: ReturnType<typeof parseConfig>;
  try {
    config = isHfMamba2Config(raw)
      ? fromHfMamba2Config(raw as Record<string, unknown>, {
          vocabSize: tensors.get("backbone.embeddings.weight")?.shape[0],
          tied: !tensors.has("lm_head.weight") || undefined,
        })
      : parseConfig(raw);
  } catch (e) {
    throw new Error(`config.json: ${(e as Error).message}`);
  }
  const t = buildTask(req.task);
  if (t.vocabSize > config.vocab_size) {
    throw new Error(
      `task ${t.name} has ${t.vocabSize} symbols but the checkpoint's vocab_size is ${config.vocab_size}: pick the task it was trained on (or drop its run.json too)`,
    );
  }
  const m = new LoopedModel(config);
  loadStateDict(m, tensors, "model.safetensors");
  model = m;
  task = t;
  announce(m, req.task, "checkpoint");
  post({ type: "eval", step: 0, result: await evaluate(m, t, req.evalCount) });
}

async function handle(req: PageRequest): Promise<void> {
  switch (req.type) {
    case "threads": {
      const r = await startWebWorkerPool(req.threads, { createWorker: createPoolWorker });
      post({ type: "threads", threads: r.threads, notice: r.notice });
      return;
    }
    case "gpu":
      post({ type: "gpu", ...(await probeGpu()) });
      return;
    case "train":
      if (training) throw new Error("already training: stop first");
      await train(req.settings);
      return;
    case "stop":
      stopRequested = true;
      return;
    case "load":
      if (training) throw new Error("stop training before loading a checkpoint");
      await load(req);
      return;
    case "inspect": {
      if (model === null || task === null) throw new Error("train or load a model first");
      const symbols =
        req.input === null ? sampleInput(task, req.seed) : parseInput(task, req.input);
      post({ type: "inspect", result: inspect(model, task, symbols) });
      return;
    }
  }
}

addEventListener("message", (e: MessageEvent<PageRequest>) => {
  handle(e.data).catch((err: unknown) => {
    post({
      type: "error",
      message: err instanceof Error ? err.message : String(err),
      request: e.data.type,
    });
  });
});
