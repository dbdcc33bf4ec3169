/**
 * The run folder (read by @loop/eval's reports):
 *   run.json                 {task, model, train, seed, stage}
 *   log.jsonl                one line per step (+ "eval" on evaluation steps)
 *   checkpoints/step-NNNNNN/ config.json, model.safetensors, optimizer.safetensors, trainer.json
 *   checkpoints/latest.json  {"step": n, "dir": "step-NNNNNN"}, replaced atomically only after the
 *                            folder is complete, so a crash never leaves a half-written "latest"
 *   final/                   config.json + model.safetensors at the end
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type LoopedModel, loadStateDict } from "@loop/looped";
import { saveCheckpoint } from "@loop/looped/node";
import type { AdamWState, NamedArray } from "@loop/tensor";
import {
  readJsonFile,
  readSafetensorsFile,
  writeFileAtomic,
  writeSafetensorsFile,
} from "@loop/tensor/node";
import type { TrainerState } from "../trainer.js";

const KEEP = 2;

export function stepDirName(step: number): string {
  return `step-${String(step).padStart(6, "0")}`;
}

export function writeJsonFile(path: string, value: unknown): void {
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Save model + optimizer + trainer state as checkpoints/step-N, then point latest.json at it. */
export function saveTrainingCheckpoint(
  runDir: string,
  model: LoopedModel,
  state: TrainerState,
): string {
  const root = join(runDir, "checkpoints");
  const name = stepDirName(state.step);
  const dir = join(root, name);
  rmSync(dir, { recursive: true, force: true });
  saveCheckpoint(dir, model);
  const moments = new Map<string, NamedArray>();
  for (const [k, a] of Object.entries(state.optimizer.m))
    moments.set(`m.${k}`, { data: a, shape: [a.length] });
  for (const [k, a] of Object.entries(state.optimizer.v))
    moments.set(`v.${k}`, { data: a, shape: [a.length] });
  writeSafetensorsFile(join(dir, "optimizer.safetensors"), moments, {
    step: String(state.optimizer.step),
  });
  writeJsonFile(join(dir, "trainer.json"), {
    step: state.step,
    cursor: state.cursor,
    elapsed_s: state.elapsed_s,
  });
  writeJsonFile(join(root, "latest.json"), { step: state.step, dir: name });
  // Keep the newest KEEP folders up to this step; folders past it are stale (a crash before
  // latest.json moved) and go too.
  const steps = readdirSync(root)
    .filter((d) => d.startsWith("step-"))
    .sort();
  const upto = steps.filter((d) => d <= name);
  for (const d of [
    ...upto.slice(0, Math.max(0, upto.length - KEEP)),
    ...steps.filter((d) => d > name),
  ]) {
    rmSync(join(root, d), { recursive: true, force: true });
  }
  return dir;
}

export function latestCheckpoint(runDir: string): string | null {
  const p = join(runDir, "checkpoints", "latest.json");
  if (!existsSync(p)) return null;
  const { dir } = readJsonFile<{ dir: string }>(p);
  return join(runDir, "checkpoints", dir);
}

/** Restore weights, optimizer and trainer state from a checkpoint folder. */
export function loadTrainingCheckpoint(dir: string, model: LoopedModel): TrainerState {
  loadStateDict(
    model,
    readSafetensorsFile(join(dir, "model.safetensors")).tensors,
    join(dir, "model.safetensors"),
  );
  const opt = readSafetensorsFile(join(dir, "optimizer.safetensors"));
  const st = readJsonFile<{ step: number; cursor: TrainerState["cursor"]; elapsed_s: number }>(
    join(dir, "trainer.json"),
  );
  const optimizer: AdamWState = { step: Number(opt.metadata.step ?? 0), m: {}, v: {} };
  for (const [k, t] of opt.tensors) {
    if (k.startsWith("m.")) optimizer.m[k.slice(2)] = t.data;
    else if (k.startsWith("v.")) optimizer.v[k.slice(2)] = t.data;
    else throw new Error(`${dir}/optimizer.safetensors: unexpected tensor "${k}"`);
  }
  return { step: st.step, cursor: st.cursor, elapsed_s: st.elapsed_s, optimizer };
}

export function ensureDir(dir: string): void {
  mkdirSync(dir, { recursive: true });
}
