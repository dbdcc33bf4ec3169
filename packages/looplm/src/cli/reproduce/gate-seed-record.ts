/*
 * One finished seed of a gate study in one small file, <out>/seed-<k>.json, as seed-record.ts
 * keeps for the sweep studies: its evaluation (fixed exits, gate points, by difficulty), the
 * settings it was made with (a hash of the study's training and evaluation settings) and the
 * machine and commit that wrote it. A resumed run reads the seed from it and trains nothing for
 * it, even where the seed's folders are gone.
 */
import { createHash } from "node:crypto";
import { canonicalJson, writeJsonFile } from "@loop/train/node";
import type { SeedGateResult } from "./gate-frontier.js";
import type { GateStudyDef } from "./gate-study-types.js";
import type { SeedMachine } from "./seed-machine.js";
import { readStudyRecord, seedRecordPath } from "./seed-record.js";

/** A gate study's seed record. */
export interface GateSeedRecord {
  study: string;
  seed: number;
  /** sha256 of the settings that decide the numbers (not the title and notes). */
  settings: string;
  result: SeedGateResult;
  machine: SeedMachine;
}

/** The hash of what decides a gate study's numbers. */
export function gateSettings(def: GateStudyDef): string {
  const { title: _t, notes: _n, paper: _p, ...rest } = def;
  return createHash("sha256").update(canonicalJson(rest)).digest("hex");
}

/** The seed's record in `outDir`, or null; a record of other settings is an error naming it. */
export function readGateSeedRecord(
  def: GateStudyDef,
  outDir: string,
  seed: number,
): GateSeedRecord | null {
  return readStudyRecord(def.name, gateSettings(def), outDir, seed, "train the seed again");
}

/** Write the seed's record (atomically). */
export function writeGateSeedRecord(
  def: GateStudyDef,
  outDir: string,
  seed: number,
  result: SeedGateResult,
  machine: SeedMachine,
): void {
  const record: GateSeedRecord = {
    study: def.name,
    seed,
    settings: gateSettings(def),
    result,
    machine,
  };
  writeJsonFile(seedRecordPath(outDir, seed), record);
}
