/* Reading run and sweep folders (formats in ../report/run-data.ts and ../eval-file.ts). */
import { join, resolve } from "node:path";
import { inputFileExists, outputKind, readInputFile } from "@loop/tensor/node";
import { type EvalFile, parseEvalFile } from "../eval-file.js";
import {
  type LogEntry,
  parseJson,
  parseLog,
  parseRunInfo,
  parseSweep,
  type RunInfo,
  type SweepFile,
} from "../report/run-data.js";

/**
 * Read a UTF-8 text file. A byte-order mark is dropped (editors on Windows write one); invalid
 * UTF-8 is an error naming the line, never silently replaced by U+FFFD.
 */
export function readText(path: string): string {
  // (by the one input rule: only a regular file, never opened blocking)
  const bytes = readInputFile(path);
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    const strict = new TextDecoder("utf-8", { fatal: true });
    let line = 1;
    let start = 0;
    for (let i = 0; i <= bytes.length; i++) {
      if (i < bytes.length && bytes[i] !== 0x0a) continue;
      try {
        strict.decode(bytes.subarray(start, i));
      } catch {
        throw new Error(`${path}:${line}: not valid UTF-8 text`);
      }
      line++;
      start = i + 1;
    }
    throw new Error(`${path}: not valid UTF-8 text`);
  }
}

/** A run folder as read from disk: run.json, log.jsonl and eval.json when present. */
export interface RunFolder {
  dir: string;
  info: RunInfo;
  log: LogEntry[];
  /** eval.json when `looplm eval` has written one. */
  eval: EvalFile | null;
}

/** Refuse `dir` unless it is a folder, saying what it is instead (`what`: "run folder", …). */
function checkDir(dir: string, what: string): void {
  const kind = outputKind(dir);
  if (kind === "missing") throw new Error(`${what} ${dir} does not exist`);
  if (kind !== "folder") throw new Error(`${dir} is a ${kind}, not a ${what}`);
}

/** Read and validate an `eval.json` file. */
export function readEvalFile(path: string): EvalFile {
  return parseEvalFile(parseJson(readText(path), path), path);
}

/** Read a run folder (`looplm train --out`); errors name the missing or malformed file. */
export function readRunFolder(dir: string): RunFolder {
  checkDir(dir, "run folder");
  const runJson = join(dir, "run.json");
  if (!inputFileExists(runJson)) throw new Error(`${dir} is not a run folder (no run.json)`);
  const info = parseRunInfo(readText(runJson), runJson);
  const logPath = join(dir, "log.jsonl");
  const log = inputFileExists(logPath) ? parseLog(readText(logPath), logPath) : [];
  const evalPath = join(dir, "eval.json");
  return { dir, info, log, eval: inputFileExists(evalPath) ? readEvalFile(evalPath) : null };
}

/** A sweep folder as read from disk: sweep.json and the member runs found. */
export interface SweepFolder {
  dir: string;
  sweep: SweepFile;
  /** Member runs that exist on disk, by row label. */
  runs: Map<string, RunFolder>;
}

/** Read a sweep folder (`looplm sweep --out`) and each of its member runs that exists. */
export function readSweepFolder(dir: string): SweepFolder {
  checkDir(dir, "sweep folder");
  const p = join(dir, "sweep.json");
  if (!inputFileExists(p)) throw new Error(`${dir} is not a sweep folder (no sweep.json)`);
  const sweep = parseSweep(readText(p), p);
  const runs = new Map<string, RunFolder>();
  for (const r of sweep.rows) {
    const rd = resolve(dir, r.run);
    if (inputFileExists(join(rd, "run.json"))) runs.set(r.label, readRunFolder(rd));
  }
  return { dir, sweep, runs };
}

/** "run" when the folder holds run.json, "sweep" for sweep.json, else an error. */
export function folderKind(dir: string): "run" | "sweep" {
  checkDir(dir, "folder");
  if (inputFileExists(join(dir, "sweep.json"))) return "sweep";
  if (inputFileExists(join(dir, "run.json"))) return "run";
  throw new Error(`${dir} holds neither run.json (a run) nor sweep.json (a sweep)`);
}
