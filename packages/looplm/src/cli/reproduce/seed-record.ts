/*
 * One finished seed of a sweep study in one small file, <out>/seed-<k>.json: every arm's
 * sweep.json with its downstream, cloze and per-length scores — all the study's tables need of
 * that seed. It is written (atomically) once the seed's arms are trained and scored; a later run
 * with `--resume` reads the seed from it and trains nothing for it, even where the seed's run
 * folders are gone. So a study too long for one machine's session runs in parts on machines
 * that do not keep each other's folders: copy the seed files into the next machine's --out.
 *
 * The file names the settings it was made with (a hash of the study's arms: tasks, models,
 * training), refusing a file from other settings instead of mixing it in silently, and the
 * machine the seed was trained on (seed-machine.ts).
 */
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { SweepFile } from "@loop/eval";
import { inputFileExists, makeDirectory, outputKind, readJsonFile } from "@loop/tensor/node";
import { canonicalJson, writeJsonFile } from "@loop/train/node";
import { CliError } from "../errors.js";
import { readRegularFile } from "../regular-file.js";
import type { SeedMachine } from "./seed-machine.js";
import { checkSeedRecordBody, checkSeedRecordHeader, FieldProblem } from "./seed-record-schema.js";
import type { StudyDef } from "./study-types.js";

/** What one arm of one seed contributes to the study's tables. */
export interface ArmRecord {
  sweep: SweepFile;
  downstream?: { name: string; acc: Record<string, number[]> };
  cloze?: { name: string; acc: Record<string, number[]> };
  perLength?: Record<string, number[][]>;
}

export interface SeedRecord {
  study: string;
  seed: number;
  /** sha256 of the study's arms (canonical JSON): the settings the seed was trained with. */
  settings: string;
  arms: Record<string, ArmRecord>;
  /** Where the seed was trained (absent in records written before records named it). */
  machine?: SeedMachine;
}

export const seedRecordPath = (outDir: string, seed: number) => join(outDir, `seed-${seed}.json`);

export function studySettings(def: StudyDef): string {
  return createHash("sha256").update(canonicalJson(def.arms)).digest("hex");
}

/** A seed record is a few kilobytes; anything this large is not one. */
const MAX_RECORD_BYTES = 16 * 1024 * 1024;

/**
 * The seed's record in `outDir`, or null where there is none. Only a regular file is read (a
 * FIFO or device under its name is refused at once), and it is checked against the schema
 * (seed-record-schema.ts) before any of its numbers is used: a record of another seed, another
 * study or other settings, or one with a field out of place, is an error naming the file and the
 * field.
 */
export function readSeedRecord(def: StudyDef, outDir: string, seed: number): SeedRecord | null {
  const path = seedRecordPath(outDir, seed);
  const text = readRegularFile(path, "a seed record", MAX_RECORD_BYTES);
  if (text === null) return null;
  const again = `remove it (or --overwrite) to train seed ${seed} again`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new CliError(
      `${path} is not a seed record: not valid JSON (${(e as Error).message}); ${again}`,
    );
  }
  try {
    const head = checkSeedRecordHeader(value);
    if (head.seed !== seed)
      throw new CliError(
        `${path} holds seed ${head.seed}, not seed ${seed} (a record renamed or copied under another seed's name); ${again}`,
      );
    if (head.study !== def.name || head.settings !== studySettings(def))
      throw new CliError(
        `${path} holds seed ${head.seed} of study ${JSON.stringify(head.study)} trained with other settings than this run's ${def.name} seed ${seed}: ${again}`,
      );
    checkSeedRecordBody(def, value as Record<string, unknown>);
  } catch (e) {
    if (e instanceof FieldProblem)
      throw new CliError(`${path} is not a valid seed record: ${e.message}; ${again}`);
    throw e;
  }
  return value as SeedRecord;
}

/**
 * Remove every seed record (`seed-<k>.json`) of the study in `outDir`, whatever kind of file it
 * is; returns their names. `--overwrite` calls this before anything else, so that a replaced
 * study that is interrupted can never be resumed into the old study's seeds.
 */
export function removeSeedRecords(outDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(outDir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
  // (a folder under such a name is left alone: reading it as a record is refused by name)
  const gone = names.filter(
    (n) => /^seed-\d+\.json$/.test(n) && !lstatSync(join(outDir, n)).isDirectory(),
  );
  for (const n of gone) rmSync(join(outDir, n), { force: true });
  return gone;
}

export function writeSeedRecord(
  def: StudyDef,
  outDir: string,
  seed: number,
  arms: Record<string, ArmRecord>,
  machine: SeedMachine,
): void {
  const record: SeedRecord = {
    study: def.name,
    seed,
    settings: studySettings(def),
    arms,
    machine,
  };
  // (a study whose arms are all shared has trained nothing in its own folder)
  makeDirectory(outDir);
  writeJsonFile(seedRecordPath(outDir, seed), record);
}

/**
 * Refuse, before any training, a seed record's name (seeds 1..`seeds`) taken by something that is
 * not a regular file (a folder, a FIFO, a device): the record is written there once the seed is
 * trained, which would otherwise fail only after the seed's training.
 */
export function checkSeedRecordTargets(outDir: string, seeds: number): void {
  for (let seed = 1; seed <= seeds; seed++) {
    const path = seedRecordPath(outDir, seed);
    const kind = outputKind(path);
    if (kind !== "missing" && kind !== "file")
      throw new CliError(
        `${path} is a ${kind}, not a regular file: a seed record is a file; remove it`,
      );
  }
}

/**
 * Every seed's members have seed 1's sizes (params, flops_per_token): the same settings plan the
 * same members, so sizes that differ come from an edited record, which is refused naming the
 * file and the field. `perSeed[k]`: seed k + 1's sweeps by arm; `fromRecord[k]`: whether they
 * were read from its record (seeds trained in this run are not to blame).
 */
export function checkSameSizes(
  outDir: string,
  perSeed: readonly ReadonlyMap<string, SweepFile>[],
  fromRecord: readonly boolean[],
): void {
  const first = perSeed[0];
  if (!first) return;
  for (let k = 1; k < perSeed.length; k++) {
    if (!fromRecord[k] && !fromRecord[0]) continue;
    const [blamed, other] = fromRecord[k] ? [k + 1, 1] : [1, k + 1];
    for (const [arm, sweep] of perSeed[k]!)
      sweep.rows.forEach((row, i) => {
        const ref = first.get(arm)?.rows[i];
        for (const field of ["params", "flops_per_token"] as const) {
          if (!ref || row[field] === ref[field]) continue;
          const [mine, theirs] = blamed === 1 ? [ref[field], row[field]] : [row[field], ref[field]];
          throw new CliError(
            `${seedRecordPath(outDir, blamed)} is not a valid seed record: arms[${JSON.stringify(arm)}].sweep.rows[${i}].${field} is ${mine}, but seed ${other}'s is ${theirs} (the same settings plan the same members); remove it (or --overwrite) to train seed ${blamed} again`,
          );
        }
      });
  }
}

/** What the gate and exit-rules studies' seed records open with: whose seed, made how. */
export interface StudyRecordHeader {
  study: string;
  seed: number;
  /** sha256 of the settings that decide the numbers. */
  settings: string;
}

/**
 * Seed `seed`'s record of study `study` (made with `settings`) in `outDir`, or null when none is
 * there; a record of another study, seed or settings is refused naming it, and `redo` says what
 * removing it lets the run do ("train the seed again").
 */
export function readStudyRecord<R extends StudyRecordHeader>(
  study: string,
  settings: string,
  outDir: string,
  seed: number,
  redo: string,
): R | null {
  const path = seedRecordPath(outDir, seed);
  if (!inputFileExists(path)) return null;
  const r = readJsonFile<R>(path);
  if (r.study !== study || r.seed !== seed || r.settings !== settings)
    throw new CliError(
      `${path} holds seed ${r.seed} of study "${r.study}" made with other settings than this run's ${study} seed ${seed}: remove it (or --overwrite) to ${redo}`,
    );
  return r;
}

/**
 * With `resume`, seed `seed`'s record (`read`) when there is one: its result and machine join the
 * study's lists, the log says it is kept, and it returns true (the run trains nothing for it).
 */
export function keepRecordedSeed<T>(
  o: { seeds: number; resume: boolean; log?: (line: string) => void },
  study: string,
  seed: number,
  read: () => { result: T; machine: SeedMachine } | null,
  perSeed: T[],
  machines: SeedMachine[],
): boolean {
  const record = o.resume ? read() : null;
  if (!record) return false;
  o.log?.(`${study} · seed ${seed}/${o.seeds}: its record is kept`);
  perSeed.push(record.result);
  machines.push(record.machine);
  return true;
}

/** The seeds 1..seeds that still need training: those without a record (all, without resume). */
export function seedsToTrain(
  def: StudyDef,
  o: { outDir: string; seeds: number; resume: boolean },
): number[] {
  const all = Array.from({ length: o.seeds }, (_, i) => i + 1);
  return o.resume ? all.filter((s) => readSeedRecord(def, o.outDir, s) === null) : all;
}
