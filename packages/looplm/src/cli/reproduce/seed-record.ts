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
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { SweepFile } from "@loop/eval";
import { readJsonFile } from "@loop/tensor/node";
import { canonicalJson, writeJsonFile } from "@loop/train/node";
import { CliError } from "../errors.js";
import type { SeedMachine } from "./seed-machine.js";
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

/**
 * The seed's record in `outDir`, or null where there is none; a record of another study or of
 * other settings is an error naming the file.
 */
export function readSeedRecord(def: StudyDef, outDir: string, seed: number): SeedRecord | null {
  const path = seedRecordPath(outDir, seed);
  if (!existsSync(path)) return null;
  const r = readJsonFile<SeedRecord>(path);
  if (r.study !== def.name || r.seed !== seed || r.settings !== studySettings(def))
    throw new CliError(
      `${path} holds seed ${r.seed} of study "${r.study}" trained with other settings than this run's ${def.name} seed ${seed}: remove it (or --overwrite) to train the seed again`,
    );
  const missing = def.arms.filter((a) => !r.arms[a.id]).map((a) => a.id);
  if (missing.length)
    throw new CliError(
      `${path} lacks the arm(s) ${missing.join(", ")}: remove it to train the seed`,
    );
  return r;
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
  writeJsonFile(seedRecordPath(outDir, seed), record);
}

/** The seeds 1..seeds that still need training: those without a record (all, without resume). */
export function seedsToTrain(
  def: StudyDef,
  o: { outDir: string; seeds: number; resume: boolean },
): number[] {
  const all = Array.from({ length: o.seeds }, (_, i) => i + 1);
  return o.resume ? all.filter((s) => readSeedRecord(def, o.outDir, s) === null) : all;
}
