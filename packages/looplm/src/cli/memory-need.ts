/*
 * What a training or evaluation setting needs in memory, at least, so that a setting no machine
 * could hold (a --batch of two billion, a --d-model of a million, --layers 100000, an
 * --eval-count of two billion) is refused before any work with the amount it needs and the flag
 * to lower, instead of growing for minutes or failing deep inside an allocation ("Invalid typed
 * array length"). Every flag that scales memory enters: the model's sizes (--d-model, --layers,
 * --loops, the vocabulary), the tokens of a micro-batch (--batch × the sequence length), the
 * micro-batches of a step (--accum: one loss each), and one batch of the evaluation (its rows
 * are made batch by batch as they are read, so --eval-count and eval's --count only set how
 * long it takes). The estimate is a floor, not a forecast: a setting under it may still not fit.
 */
import { totalmem } from "node:os";
import { countParameters, isAttentionLayer, type ModelConfig } from "@loop/looped";
import type { TrainOptions } from "@loop/train";
import { CliError } from "./errors.js";

/**
 * The evaluation a setting runs: rows in all, rows per forward pass. Its batches are made as they
 * are read (`Task.evalBatches`), so one batch of rows is held at a time.
 */
export interface EvalSize {
  count: number;
  batchSize: number;
}

/** Where each flag's share of the memory goes, with the flags that set it. */
export interface MemoryNeed {
  params: number;
  /** float32 weights, gradients and the two AdamW moments (0 for an evaluation). */
  weightBytes: number;
  /**
   * One micro-batch's activations, counted low (the tensors each layer application keeps for
   * its backward and their gradients, the logits and theirs), plus one loss per micro-batch.
   */
  stepBytes: number;
  /**
   * One evaluation batch: its token ids (tokens, targets, document index: 12 bytes a token) and
   * its forward's outputs (every layer application's and every loop step's logits).
   */
  evalBatchBytes: number;
  /** What the parts were computed from, for the message. */
  sizes: { batchSize: number; gradAccum: number; seqLen: number; eval?: EvalSize };
}

/**
 * float32 values one token keeps per application of layer `i` for its backward (a floor: the
 * outputs of the layer's ops, as the model's forward computes them).
 */
export function layerFloatsPerToken(cfg: ModelConfig, i: number): number {
  const D = cfg.d_model;
  let n: number;
  if (isAttentionLayer(cfg, i)) {
    const kv = (D * cfg.attention.n_kv_heads) / cfg.attention.n_heads;
    // norm, q | k | v, rotated q | k, attention output and its softmax statistics, o_proj, residual
    n = D + (D + 2 * kv) + (D + kv) + D + cfg.attention.n_heads + D + D;
  } else {
    const s = cfg.ssm;
    const Di = s.expand * D;
    const GN = s.n_groups * s.d_state;
    const H = Di / s.headdim;
    // norm; z | xBC | dt; conv+silu x | B | C; softplus dt; the scan's y and its chunk states;
    // the gated norm; out_proj; residual
    n = D + (Di + Di + 2 * GN + H) + (Di + 2 * GN) + H + (Di + (Di * s.d_state) / s.chunk_size);
    n += Di + D + D;
  }
  // a transformer layer's MLP: norm, gate | up, their product, down, residual
  if (cfg.mlp) n += D + 2 * cfg.mlp.d_ff + cfg.mlp.d_ff + D + D;
  return n;
}

/** Σ over the layers of layerFloatsPerToken: one application of the looped block. */
function blockFloatsPerToken(cfg: ModelConfig): number {
  let n = 0;
  for (let i = 0; i < cfg.n_layers; i++) n += layerFloatsPerToken(cfg, i);
  return n;
}

/** The training options the estimate reads (absent: one micro-batch, no checkpointing). */
export type MemoryTrainOptions = Pick<TrainOptions, "batchSize"> &
  Partial<Pick<TrainOptions, "gradAccum" | "checkpointing">>;

/**
 * What training a model of `cfg` needs at least, on micro-batches of `train.batchSize` rows of
 * `seqLen` tokens, evaluated on `evaluation` (absent: no evaluation counted).
 */
export function trainingMemoryNeed(
  cfg: ModelConfig,
  train: MemoryTrainOptions,
  seqLen: number,
  evaluation?: EvalSize,
): MemoryNeed {
  const params = countParameters(cfg);
  const gradAccum = train.gradAccum ?? 1;
  const V = cfg.vocab_size;
  const block = blockFloatsPerToken(cfg);
  // The backward's gradient of each kept activation stays in the micro-batch's pooled memory as
  // long as the activation does: twice the forward's. With activation checkpointing only each
  // loop step's output is kept, and one loop step is recomputed (with its gradients) at a time;
  // per layer, each layer application's output, and one layer recomputed at a time.
  let widest = 0;
  for (let i = 0; i < cfg.n_layers; i++) widest = Math.max(widest, layerFloatsPerToken(cfg, i));
  const activations =
    train.checkpointing === "layer"
      ? cfg.n_loops * cfg.n_layers * cfg.d_model + 2 * widest
      : train.checkpointing
        ? cfg.n_loops * cfg.d_model + 2 * block
        : 2 * cfg.n_loops * block;
  // the logits and their gradient: at the last loop step, at every one with an exit gate
  const logitSteps = cfg.exit_gate ? cfg.n_loops : 1;
  const perToken = activations + 2 * V * logitSteps;
  const need = evaluationNeed(cfg, seqLen, evaluation);
  return {
    ...need,
    params,
    weightBytes: 16 * params,
    stepBytes: 4 * train.batchSize * seqLen * perToken + 4 * gradAccum,
    sizes: { batchSize: train.batchSize, gradAccum, seqLen, eval: evaluation },
  };
}

function evaluationNeed(cfg: ModelConfig, seqLen: number, e: EvalSize | undefined) {
  if (!e) return { evalBatchBytes: 0 };
  // without a tape a forward still keeps its outputs until the batch is scored
  const perToken = cfg.n_loops * (blockFloatsPerToken(cfg) + cfg.vocab_size);
  const tokens = Math.min(e.batchSize, e.count) * seqLen;
  return { evalBatchBytes: 12 * tokens + 4 * tokens * perToken };
}

/** What evaluating a model of `cfg` on `evaluation` needs (the weights once, no gradients). */
export function evaluationMemoryNeed(
  cfg: ModelConfig,
  seqLen: number,
  evaluation: EvalSize,
): MemoryNeed {
  const params = countParameters(cfg);
  return {
    ...evaluationNeed(cfg, seqLen, evaluation),
    params,
    weightBytes: 4 * params,
    stepBytes: 0,
    sizes: { batchSize: 0, gradAccum: 0, seqLen, eval: evaluation },
  };
}

/** `n` bytes in binary units ("1.5 KiB"). */
export function formatBytes(n: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${n.toFixed(1)} ${units[i]}`;
}

/** The total of a need. */
export function needBytes(n: MemoryNeed): number {
  return n.weightBytes + n.stepBytes + n.evalBatchBytes;
}

/**
 * The flags that name a need's largest part. `flags` names them for the command (`eval` calls
 * its evaluation rows --count and its batch --batch-size).
 */
function flagToLower(n: MemoryNeed, flags: { count: string; evalBatch: string }): string {
  // (a batch of one row cannot be lowered: then its rows' length is what to lower)
  const rowLength = "the sequence length (--length or --seq-len; or --layers, --loops)";
  const s = n.sizes;
  const evalRows = s.eval ? Math.min(s.eval.batchSize, s.eval.count) : 0;
  const parts: [number, string][] = [
    [n.weightBytes, "--d-model or --layers"],
    [
      n.stepBytes,
      s.batchSize <= 1 ? rowLength : "--batch (or --layers, --loops, the sequence length)",
    ],
    [
      n.evalBatchBytes,
      evalRows <= 1 ? rowLength : `${flags.evalBatch} (or --layers, --loops, the sequence length)`,
    ],
  ];
  return parts.reduce((a, b) => (b[0] > a[0] ? b : a))[1];
}

/** One line: what the setting needs, what for, and which flag to lower. */
export function memoryNeedLine(
  need: MemoryNeed,
  flags = { count: "--eval-count", evalBatch: "--batch" },
): string {
  const s = need.sizes;
  const what: string[] = [];
  if (need.weightBytes > 0)
    what.push(
      `${formatBytes(need.weightBytes)} for ${need.params.toLocaleString("en-US")} parameters${need.stepBytes > 0 ? " with their gradients and AdamW moments" : ""}`,
    );
  if (need.stepBytes > 0)
    what.push(
      `${formatBytes(need.stepBytes)} for one step's activations at --batch ${s.batchSize} × ${s.seqLen} tokens${s.gradAccum > 1 ? `, --accum ${s.gradAccum}` : ""}`,
    );
  if (s.eval)
    what.push(
      `${formatBytes(need.evalBatchBytes)} for the evaluation of ${flags.count} ${s.eval.count} rows, ${Math.min(s.eval.batchSize, s.eval.count)} at a time`,
    );
  const doing = need.stepBytes > 0 ? "training" : "evaluating";
  return `${doing} this setting needs at least ${formatBytes(needBytes(need))} of memory (${what.join(", ")}): lower ${flagToLower(need, flags)}`;
}

/** Refuse a need over the machine's memory. */
export function checkMemoryNeed(
  need: MemoryNeed,
  available = totalmem(),
  flags?: { count: string; evalBatch: string },
): void {
  if (needBytes(need) <= available) return;
  throw new CliError(`${memoryNeedLine(need, flags)} (this machine has ${formatBytes(available)})`);
}

/** Whether `e` is JavaScript running out of room for an array (the allocation, not the data). */
export function isAllocationFailure(e: unknown): boolean {
  return (
    e instanceof RangeError &&
    /Invalid typed array length|Array buffer allocation failed|Invalid array length/.test(e.message)
  );
}

/**
 * float32 values the decode state of layer `i` holds per sequence (a floor): a Mamba-2 layer's
 * convolution window and SSM state, an attention layer's keys and values for `capacity` tokens.
 */
function layerStateFloats(cfg: ModelConfig, i: number, capacity: number): number {
  const D = cfg.d_model;
  if (isAttentionLayer(cfg, i))
    return (2 * capacity * D * cfg.attention.n_kv_heads) / cfg.attention.n_heads;
  const s = cfg.ssm;
  const Di = s.expand * D;
  return (s.d_conv - 1) * (Di + 2 * s.n_groups * s.d_state) + Di * s.d_state;
}

/** What one command's use of a loaded model needs (no training): see modelRunNeed. */
export interface ModelRun {
  /** The command, for the message ("generate"). */
  command: string;
  /** Tokens of one forward pass whose outputs are kept (0: none). */
  forwardTokens?: number;
  /** Tokens a decode state holds (generate: the prompt and the new tokens; 0: no decoding). */
  decodeCapacity?: number;
  /** The flags that lower the need, beside the model's own sizes (e.g. "--max-new"). */
  flags?: string;
}

/**
 * The memory a command needs at least to run a model of `cfg` (a floor, as for training): its
 * float32 weights; a forward's outputs for every layer application and loop step's logits; a
 * decode state per loop step and layer. `n_loops` enters each: a config edited to loop a billion
 * times is refused here, before the model is built, instead of growing for ever.
 */
export function modelRunNeed(cfg: ModelConfig, run: ModelRun): { bytes: number; parts: string[] } {
  const params = countParameters(cfg);
  const parts: string[] = [
    `${formatBytes(4 * params)} for ${params.toLocaleString("en-US")} parameters`,
  ];
  let bytes = 4 * params;
  const T = run.forwardTokens ?? 0;
  if (T > 0) {
    const b = 4 * T * cfg.n_loops * (blockFloatsPerToken(cfg) + cfg.vocab_size);
    bytes += b;
    parts.push(
      `${formatBytes(b)} for the outputs of a forward of ${T} token${T === 1 ? "" : "s"} through ${cfg.n_loops} loop steps`,
    );
  }
  const C = run.decodeCapacity ?? 0;
  if (C > 0) {
    let perLoop = 0;
    for (let i = 0; i < cfg.n_layers; i++) perLoop += layerStateFloats(cfg, i, C);
    const b = 4 * cfg.n_loops * perLoop;
    bytes += b;
    parts.push(
      `${formatBytes(b)} for the decode state of ${cfg.n_loops} loop steps × ${cfg.n_layers} layers over ${C} tokens`,
    );
  }
  return { bytes, parts };
}

/** Refuse running a model of `cfg` whose modelRunNeed is over the machine's memory. */
export function checkModelRun(cfg: ModelConfig, run: ModelRun, available = totalmem()): void {
  const { bytes, parts } = modelRunNeed(cfg, run);
  if (bytes <= available) return;
  throw new CliError(
    `${run.command} with this model needs at least ${formatBytes(bytes)} of memory (${parts.join(", ")}; this machine has ${formatBytes(available)}): lower ${run.flags ? `${run.flags}, or ` : ""}n_loops or n_layers in its config.json, or use a smaller model`,
  );
}
