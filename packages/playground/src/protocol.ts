/**
 * Messages between the page and its model worker (engine/model-worker.ts). The model lives in
 * the worker: training and the thread pool's Atomics.wait block the thread they run on, and the
 * page must stay responsive.
 */
import type { AccuracyResult } from "@loop/eval";
import type { ModelConfig } from "@loop/looped";
import type { Settings, TaskSettings } from "./settings.js";

/** One loop step's view of one input: prediction and confidence at every position. */
export interface StepView {
  /** Predicted symbol id per position. */
  predicted: number[];
  /** Softmax probability of the predicted symbol per position. */
  confidence: number[];
}

export interface InspectResult {
  /** Input symbols. */
  symbols: string[];
  /** Target symbol per position ("" where the task defines none). */
  targets: string[];
  /** Vocabulary symbols by id. */
  vocab: string[];
  /** One entry per loop step r = 1..R. */
  steps: StepView[];
  /** Exit distribution p(r | t) as [R][T] for a gated model, else null. */
  exitPdf: number[][] | null;
}

export type PageRequest =
  | { type: "threads"; threads: number }
  /** Is there a WebGPU adapter (the worker opens its device once and keeps it)? */
  | { type: "gpu" }
  | { type: "train"; settings: Settings }
  | { type: "stop" }
  /** Inspect the typed `input`, or a held-out example sampled with `seed` when null. */
  | { type: "inspect"; input: string | null; seed: number }
  | {
      type: "load";
      config: string;
      weights: ArrayBuffer;
      /** The task: from the run folder's run.json, else the page's task settings. */
      task: TaskSettings;
      evalCount: number;
    };

export interface ModelInfo {
  config: ModelConfig;
  params: number;
  taskName: string;
  task: TaskSettings;
  /** Where the weights came from: "trained here" or the checkpoint's description. */
  source: string;
}

export type WorkerReply =
  | { type: "threads"; threads: number; notice: string | null }
  /** The WebGPU adapter's name, or null and why there is none. */
  | { type: "gpu"; adapter: string | null; reason: string | null }
  | { type: "model"; info: ModelInfo }
  | { type: "step"; step: number; loss: number; elapsed: number; poolJobs: number }
  | { type: "eval"; step: number; result: AccuracyResult }
  | { type: "done"; step: number; stopped: boolean }
  | { type: "inspect"; result: InspectResult }
  /** A request failed; `request` says which kind. */
  | { type: "error"; message: string; request: PageRequest["type"] };
