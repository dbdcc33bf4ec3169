/*
 * What a training setting needs in memory, at least, so that a setting no machine could hold
 * (a --batch of two billion, a --d-model of a million) is refused before any work with the
 * amount it needs, instead of failing deep inside an allocation ("Invalid typed array length").
 * The estimate is a floor, not a forecast: a setting under it may still not fit.
 */
import { totalmem } from "node:os";
import { countParameters, type ModelConfig } from "@loop/looped";
import type { TrainOptions } from "@loop/train";
import { CliError } from "./errors.js";

export interface MemoryNeed {
  params: number;
  /** float32 weights, gradients and the two AdamW moments. */
  weightBytes: number;
  /** One micro-batch's activations, counted low: the logits and their gradient, and each
   * layer's output at every loop step. */
  stepBytes: number;
}

export function trainingMemoryNeed(
  cfg: ModelConfig,
  train: Pick<TrainOptions, "batchSize">,
  seqLen: number,
): MemoryNeed {
  const params = countParameters(cfg);
  const tokens = train.batchSize * seqLen;
  const perToken = 2 * cfg.vocab_size + cfg.n_layers * cfg.n_loops * cfg.d_model;
  return { params, weightBytes: 16 * params, stepBytes: 4 * tokens * perToken };
}

export function formatBytes(n: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${n.toFixed(1)} ${units[i]}`;
}

/** One line: what the setting needs, what for, and which flag to lower. */
export function memoryNeedLine(need: MemoryNeed, batchSize: number, seqLen: number): string {
  const flag = need.stepBytes >= need.weightBytes ? "--batch" : "--d-model or --layers";
  return `training this setting needs at least ${formatBytes(need.weightBytes + need.stepBytes)} of memory (${formatBytes(need.weightBytes)} for ${need.params.toLocaleString("en-US")} parameters with their gradients and AdamW moments, ${formatBytes(need.stepBytes)} for one step's activations at --batch ${batchSize} × ${seqLen} tokens): lower ${flag}`;
}

/** Refuse a setting whose floor exceeds the machine's memory. */
export function checkTrainingMemory(
  cfg: ModelConfig,
  train: Pick<TrainOptions, "batchSize">,
  seqLen: number,
  available = totalmem(),
): void {
  const need = trainingMemoryNeed(cfg, train, seqLen);
  if (need.weightBytes + need.stepBytes <= available) return;
  throw new CliError(
    `${memoryNeedLine(need, train.batchSize, seqLen)} (this machine has ${formatBytes(available)})`,
  );
}

/** Whether `e` is JavaScript running out of room for an array (the allocation, not the data). */
export function isAllocationFailure(e: unknown): boolean {
  return (
    e instanceof RangeError &&
    /Invalid typed array length|Array buffer allocation failed|Invalid array length/.test(e.message)
  );
}
