/**
 * What the page trains: the task, the model (backbone, N⊗R, width, gate) and the schedule, with
 * the defaults a newcomer gets. The defaults are the README's default experiment (1⊗4 Mamba-2,
 * d_model 32, p-hop |Σ| = 4, n = 32, p = 3 with dense targets), cut to a length that learns
 * visibly on WebAssembly in under a minute.
 */
import { type Backbone, type ModelConfig, parseConfig } from "@loop/looped";
import { mano, pHop, type Task } from "@loop/tasks";

export type TaskSettings =
  | { name: "phop"; alphabet: number; length: number; hops: number }
  | { name: "mano"; maxOps: number };

export interface ModelSettings {
  backbone: Backbone;
  /** N: distinct layers. */
  layers: number;
  /** R: loop steps. */
  loops: number;
  dModel: number;
  exitGate: boolean;
}

/** Where training runs: the CPU (WebAssembly worker threads) or the GPU through WebGPU. */
export type ComputeBackend = "cpu" | "webgpu";

export interface TrainSettings {
  backend: ComputeBackend;
  steps: number;
  batchSize: number;
  lr: number;
  /** Evaluate every k steps (and at the end). */
  evalEvery: number;
  /** Held-out examples in each evaluation. */
  evalCount: number;
  seed: number;
}

export interface Settings {
  task: TaskSettings;
  model: ModelSettings;
  train: TrainSettings;
}

export const DEFAULT_SETTINGS: Settings = {
  task: { name: "phop", alphabet: 4, length: 32, hops: 3 },
  model: { backbone: "mamba", layers: 1, loops: 4, dModel: 32, exitGate: false },
  train: {
    backend: "cpu",
    steps: 300,
    batchSize: 32,
    lr: 6e-3,
    evalEvery: 20,
    evalCount: 256,
    seed: 1,
  },
};

/** Rows per forward pass when evaluating (the `looplm eval` default, so results agree). */
export const EVAL_BATCH = 32;

/** The task; p-hop trains on dense targets (every prefix's answer), as the default experiment. */
export function buildTask(t: TaskSettings, dense = true): Task {
  return t.name === "phop"
    ? pHop({ alphabet: t.alphabet, length: t.length, hops: t.hops, dense })
    : mano({ maxOps: t.maxOps });
}

/** The model config: small SSM heads and chunks to suit sequences of a few dozen tokens. */
export function buildConfig(m: ModelSettings, vocabSize: number): ModelConfig {
  const attnLayers = Array.from({ length: m.layers }, (_v, i) => i).filter((i) => i % 2 === 1);
  if (m.backbone === "hybrid" && attnLayers.length === 0) {
    throw new Error("a hybrid backbone needs N ≥ 2 layers (odd layers are attention)");
  }
  return parseConfig({
    backbone: m.backbone,
    vocab_size: vocabSize,
    d_model: m.dModel,
    n_layers: m.layers,
    n_loops: m.loops,
    exit_gate: m.exitGate,
    ssm: { d_state: 16, headdim: 16, chunk_size: 16 },
    attention: { n_heads: 4, n_kv_heads: 4 },
    attn_layers: m.backbone === "hybrid" ? attnLayers : [],
    // the CLI's default MLP width: 8/3·D rounded to a multiple of 8
    mlp:
      m.backbone === "transformer"
        ? { d_ff: Math.max(8, Math.round(((8 / 3) * m.dModel) / 8) * 8) }
        : null,
  });
}

const int = (v: unknown, name: string): number => {
  if (typeof v !== "number" || !Number.isInteger(v)) {
    throw new Error(`run.json: task.${name} must be an integer, got ${JSON.stringify(v)}`);
  }
  return v;
};

/** The task a `looplm train` run folder's run.json names (mano or p-hop). */
export function taskFromRunJson(raw: unknown): TaskSettings {
  const t = (raw as { task?: Record<string, unknown> } | null)?.task;
  if (t === undefined || t === null || typeof t !== "object") {
    throw new Error("run.json: no task section");
  }
  if (t.name === "phop") {
    return {
      name: "phop",
      alphabet: int(t.alphabet, "alphabet"),
      length: int(t.length, "length"),
      hops: int(t.hops, "hops"),
    };
  }
  if (t.name === "mano") return { name: "mano", maxOps: int(t.max_ops, "max_ops") };
  throw new Error(
    `run.json: the playground shows mano and phop runs, this one is ${JSON.stringify(t.name)}`,
  );
}

/** "1⊗4 mamba" */
export function modelLabel(c: Pick<ModelConfig, "n_layers" | "n_loops" | "backbone">): string {
  return `${c.n_layers}⊗${c.n_loops} ${c.backbone}`;
}
