/*
 * The run folder (read by @loop/eval's reports):
 *   run.json                 {task, model, train, seed, stage}
 *   log.jsonl                one line per step (+ "eval" on evaluation steps)
 *   checkpoints/step-NNNNNN/ config.json, model.safetensors, optimizer.safetensors, trainer.json
 *   checkpoints/latest.json  {"step": n, "dir": "step-NNNNNN"}, replaced atomically only after the
 *                            folder is complete, so a crash never leaves a half-written "latest"
 *   final/                   config.json + model.safetensors at the end
 *   run.lock                 {pid, host, since} while a process trains in the folder
 */
import { existsSync, readdirSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { type LoopedModel, loadStateDict } from "@loop/looped";
import { saveCheckpoint } from "@loop/looped/node";
import type { AdamWState, NamedArray } from "@loop/tensor";
import {
  inputFileExists,
  inputFileStats,
  readJsonFile,
  readSafetensorsFile,
  writeFileAtomic,
  writeSafetensorsFile,
} from "@loop/tensor/node";
import type { LossScaleState } from "../loss-scale.js";
import type { TrainerState } from "../trainer.js";

const KEEP = 2;

/** The folder name of the checkpoint at `step`, e.g. `step-000100`. */
export function stepDirName(step: number): string {
  return `step-${String(step).padStart(6, "0")}`;
}

/** Write `value` as indented JSON to `path` atomically. */
export function writeJsonFile(path: string, value: unknown): void {
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Save model + optimizer + trainer state as checkpoints/step-N, then point latest.json at it. */
export function saveTrainingCheckpoint(
  runDir: string,
  model: LoopedModel,
  state: TrainerState,
  /**
   * The step's log line when the checkpoint is written before it is logged (before the step's
   * evaluation): kept in trainer.json, so that a resume can log it (evaluating it again) when the
   * run stopped before it was.
   */
  line?: Record<string, unknown>,
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
    ...(state.lossScale ? { loss_scale: state.lossScale } : {}),
    ...(line ? { line } : {}),
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

/**
 * The run's newest complete checkpoint folder (`checkpoints/latest.json` points at it), or null.
 */
export function latestCheckpoint(runDir: string): string | null {
  const p = join(runDir, "checkpoints", "latest.json");
  if (!inputFileExists(p)) return null;
  const { dir } = readJsonFile<{ dir: string }>(p);
  return join(runDir, "checkpoints", dir);
}

function stepOfDir(name: string): number | null {
  const m = /^step-(\d+)$/.exec(name);
  return m ? Number(m[1]) : null;
}

/**
 * Checkpoint folders to try on resume, newest first: the one latest.json names, then the older
 * ones kept beside it. Folders past latest.json were never completed and are not offered.
 */
export function checkpointCandidates(runDir: string): string[] {
  const root = join(runDir, "checkpoints");
  if (!existsSync(root)) return [];
  let latest: number | null = null;
  // (a FIFO, folder or dangling link under latest.json's name is refused, naming it; only a
  // missing or damaged file falls back to the folders)
  inputFileStats(join(root, "latest.json"));
  try {
    latest = stepOfDir(readJsonFile<{ dir: string }>(join(root, "latest.json")).dir);
  } catch {
    latest = null; // missing or damaged: every complete-looking folder is a candidate
  }
  return readdirSync(root)
    .filter((d) => {
      const s = stepOfDir(d);
      return s !== null && (latest === null || s <= latest);
    })
    .sort()
    .reverse()
    .map((d) => join(root, d));
}

function finiteMoments(dir: string, name: string, data: Float32Array): void {
  const i = data.findIndex((v) => !Number.isFinite(v));
  if (i >= 0)
    throw new Error(
      `${dir}/optimizer.safetensors is damaged — non-finite values: ${name} (${data[i]} at index ${i})`,
    );
}

/**
 * Restore weights, optimizer and trainer state from a checkpoint folder, checking that they
 * agree: trainer.json's step is the folder's step and the optimizer's, its cursor and elapsed
 * time are well formed, and every tensor is finite.
 */
export function loadTrainingCheckpoint(dir: string, model: LoopedModel): TrainerState {
  const trainerPath = join(dir, "trainer.json");
  const st = readJsonFile<{
    step: unknown;
    cursor: unknown;
    elapsed_s: unknown;
    loss_scale?: unknown;
  }>(trainerPath);
  const opt = readSafetensorsFile(join(dir, "optimizer.safetensors"));
  const folderStep = stepOfDir(basename(dir));
  const optStep = Number(opt.metadata.step);
  const bad = (what: string) => new Error(`${trainerPath}: ${what}`);
  if (!Number.isInteger(st.step) || (st.step as number) < 1)
    throw bad(`"step" must be an integer ≥ 1, got ${JSON.stringify(st.step)}`);
  const step = st.step as number;
  if (folderStep !== null && folderStep !== step)
    throw bad(`"step" is ${step} but the folder is step ${folderStep}`);
  if (optStep !== step)
    throw bad(`"step" is ${step} but optimizer.safetensors is at step ${opt.metadata.step}`);
  if (
    typeof st.cursor !== "object" ||
    st.cursor === null ||
    Object.values(st.cursor).some((v) => typeof v !== "number" || !Number.isFinite(v))
  )
    throw bad(`"cursor" must be an object of numbers, got ${JSON.stringify(st.cursor)}`);
  if (typeof st.elapsed_s !== "number" || !(st.elapsed_s >= 0))
    throw bad(`"elapsed_s" must be a number ≥ 0, got ${JSON.stringify(st.elapsed_s)}`);
  const ls = st.loss_scale as Partial<LossScaleState> | undefined;
  if (
    ls !== undefined &&
    (typeof ls !== "object" ||
      ls === null ||
      !(typeof ls.scale === "number" && ls.scale > 0) ||
      !(Number.isInteger(ls.good) && (ls.good as number) >= 0))
  )
    throw bad(
      `"loss_scale" must be {"scale": a number > 0, "good": an integer ≥ 0}, got ${JSON.stringify(ls)}`,
    );
  loadStateDict(
    model,
    readSafetensorsFile(join(dir, "model.safetensors")).tensors,
    join(dir, "model.safetensors"),
  );
  const optimizer: AdamWState = { step: optStep, m: {}, v: {} };
  for (const [k, t] of opt.tensors) {
    finiteMoments(dir, k, t.data);
    if (k.startsWith("m.")) optimizer.m[k.slice(2)] = t.data;
    else if (k.startsWith("v.")) optimizer.v[k.slice(2)] = t.data;
    else throw new Error(`${dir}/optimizer.safetensors: unexpected tensor "${k}"`);
  }
  return {
    step,
    cursor: st.cursor as TrainerState["cursor"],
    elapsed_s: st.elapsed_s,
    optimizer,
    ...(ls ? { lossScale: { scale: ls.scale!, good: ls.good! } } : {}),
  };
}

/**
 * The log line a checkpoint written before its step was logged keeps (saveTrainingCheckpoint's
 * `line`), or null.
 */
export function pendingLogLine(dir: string): ({ step: number } & Record<string, unknown>) | null {
  const st = readJsonFile<{ step?: unknown; line?: { step?: unknown } }>(join(dir, "trainer.json"));
  const line = st.line;
  return line && typeof line === "object" && line.step === st.step
    ? (line as { step: number } & Record<string, unknown>)
    : null;
}
