/*
 * The task record of a trained model, task.json beside its weights (and in its run folder): the
 * task with its options, and the tokenizer it was trained with as a content hash and where it
 * lives. `eval` and `generate` take the task and tokenizer from it by default and refuse a
 * different tokenizer (by hash: two tokenizers of one size can spell different texts) or task.
 * A model saved before records existed has none: it still works, with one line saying so.
 */
import { createHash } from "node:crypto";
import { basename, dirname, join, resolve } from "node:path";
import { isHfMamba2Config } from "@loop/looped";
import { readModelJson } from "@loop/looped/node";
import type { Task, TextTokenizer } from "@loop/tasks";
import { inputFileExists, readJsonFile, writeFileAtomic } from "@loop/tensor/node";
import { canonicalJson } from "@loop/train/node";
import { CliError } from "./errors.js";

/** The record's file name, in a checkpoint folder and in its run folder. */
export const TASK_RECORD = "task.json";

/** What task.json holds. */
export interface TaskRecord {
  format: 1;
  /** The task's name and options, as run.json records them ({name: "mano", max_ops: 10}). */
  task: Record<string, unknown> & { name: string };
  /** The tokenizer of a task over text; null for symbolic tasks. */
  tokenizer: {
    /** SHA-256 of the tokenizer's content (its tokenizer.json, keys sorted). */
    sha256: string;
    /** Its copy beside the weights (a file name in the record's folder). */
    file: string;
    /** Where it came from: the tokenizer.json the run loaded (absolute), or "bpe"/"char" trained. */
    source: string;
  } | null;
}

/** The content hash of a tokenizer (independent of how its file is formatted). */
export function tokenizerHash(tok: TextTokenizer): string {
  return createHash("sha256").update(canonicalJson(tok.toJSON())).digest("hex");
}

/** Write task.json for `task` (recorded options `info`) into each of `dirs`. */
export function writeTaskRecord(
  dirs: readonly string[],
  task: Task,
  info: Record<string, unknown>,
): void {
  const tok = task.tokenizer;
  const given = typeof info.tokenizer === "string" ? info.tokenizer : null;
  const record: TaskRecord = {
    format: 1,
    task: { ...info, name: String(info.name ?? task.name) },
    tokenizer: tok
      ? {
          sha256: tokenizerHash(tok),
          file: "tokenizer.json",
          source: given && given !== "bpe" && given !== "char" ? resolve(given) : (given ?? "bpe"),
        }
      : null,
  };
  for (const d of dirs)
    writeFileAtomic(join(d, TASK_RECORD), `${JSON.stringify(record, null, 2)}\n`);
}

/** A task record as read, with the file it came from. */
export interface FoundRecord {
  record: TaskRecord;
  /** The task.json read. */
  path: string;
}

/** Why `r` is not a task record, or null. */
function recordProblem(r: unknown): string | null {
  if (typeof r !== "object" || r === null) return "it is not a JSON object";
  const o = r as Record<string, unknown>;
  if (o.format !== 1) return `"format" is ${JSON.stringify(o.format)}, not 1`;
  const t = o.task as Record<string, unknown> | null;
  if (typeof t !== "object" || t === null || typeof t.name !== "string")
    return '"task" lacks its "name"';
  const k = o.tokenizer as Record<string, unknown> | null;
  if (k !== null) {
    if (typeof k !== "object") return '"tokenizer" is neither an object nor null';
    if (typeof k.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(k.sha256))
      return '"tokenizer.sha256" is not a SHA-256 in hex';
    if (typeof k.file !== "string" || basename(k.file) !== k.file)
      return '"tokenizer.file" is not a file name';
    if (typeof k.source !== "string") return '"tokenizer.source" is not a string';
  }
  // Only the language-model task reads text through a tokenizer: a record naming another task
  // beside a tokenizer (or lm without one) was edited, and evaluating by it would silently score
  // the model on a task it was never trained on.
  if (t.name === "lm" && k === null)
    return 'task "lm" records no "tokenizer" (a record edited from a symbolic task?); restore it or remove it';
  if (t.name !== "lm" && k !== null)
    return `task ${JSON.stringify(t.name)} reads no text, yet the record names a tokenizer (a language model's record edited to another task?); restore it or remove it`;
  return null;
}

/**
 * The task record of the checkpoint in `checkpoint`: its own task.json, else its run folder's
 * (`runDir`, or the run above checkpoints/step-N); null for a model saved without one.
 */
export function findTaskRecord(checkpoint: string, runDir: string | null): FoundRecord | null {
  const above = dirname(checkpoint);
  const places = [checkpoint, runDir, basename(above) === "checkpoints" ? dirname(above) : null];
  for (const d of places) {
    if (!d) continue;
    const path = join(d, TASK_RECORD);
    let r: unknown;
    try {
      // (by the one input rule: a FIFO, folder or dangling link under task.json's name is named)
      if (!inputFileExists(path)) continue;
      r = readJsonFile(path);
    } catch (e) {
      throw new CliError((e as Error).message);
    }
    const bad = recordProblem(r);
    if (bad) throw new CliError(`${path} is not a looplm task record: ${bad}`);
    return { record: r as TaskRecord, path };
  }
  return null;
}

/** Whether `checkpoint`'s config.json is a Hugging Face Mamba-2 one (false when unreadable). */
function isHfFolder(checkpoint: string): boolean {
  try {
    return isHfMamba2Config(readModelJson(join(checkpoint, "config.json")));
  } catch {
    // (loading the model names what is wrong with its config)
    return false;
  }
}

/** The line said when a model has no record (one line; the command goes on). */
export function noRecordLine(checkpoint: string): string {
  if (isHfFolder(checkpoint))
    return `looplm: ${checkpoint} is a Hugging Face folder, which records no task or tokenizer (${TASK_RECORD}): its task and tokenizer cannot be checked\n`;
  return `looplm: ${checkpoint} has no task record (${TASK_RECORD}; models saved by older versions have none): its task and tokenizer cannot be checked\n`;
}

/** The recorded tokenizer's copy beside the weights (null when the record has no tokenizer). */
export function recordedTokenizerPath(found: FoundRecord): string | null {
  const t = found.record.tokenizer;
  return t ? join(dirname(found.path), t.file) : null;
}

/**
 * Refuse tokenizer `tok` (read from `where`, as the user named it) unless it is the one the
 * record names: the message names both, by place and hash.
 */
export function checkRecordedTokenizer(
  found: FoundRecord,
  tok: TextTokenizer,
  where: string,
): void {
  const want = found.record.tokenizer;
  if (!want) return;
  const got = tokenizerHash(tok);
  if (got === want.sha256) return;
  const short = (h: string) => h.slice(0, 12);
  const copy = recordedTokenizerPath(found);
  // the copy beside the weights is the one that changed: naming it twice would say nothing
  if (where === copy)
    throw new CliError(
      `${copy} (sha256 ${short(got)}…, ${tok.vocabSize} tokens) no longer holds the tokenizer the model was trained with (sha256 ${short(want.sha256)}…, from ${want.source}; recorded in ${found.path}): it was replaced or edited; put that tokenizer back there or pass it with --tokenizer`,
    );
  throw new CliError(
    `${where} (sha256 ${short(got)}…, ${tok.vocabSize} tokens) is not the tokenizer the model was trained with: ${recordedTokenizerPath(found)} (sha256 ${short(want.sha256)}…, from ${want.source}; recorded in ${found.path}); use that one or leave the tokenizer out`,
  );
}

/** Refuse task `name` unless it is the recorded one (a model's ids mean nothing in another task). */
export function checkRecordedTask(found: FoundRecord, name: string): void {
  const want = found.record.task.name;
  if (name !== want)
    throw new CliError(
      `--task ${name} is not the task the model was trained on: ${want} (recorded in ${found.path}); evaluate it on ${want}`,
    );
}
