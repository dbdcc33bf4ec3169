/*
 * What `looplm reproduce --overwrite` removes of a finished study: the folders it trained in
 * (`studyFolders`) and everything it wrote (`removeStudyResults`), refusing a folder a live
 * process trains in or a link in place of one before anything goes.
 */
import { existsSync, lstatSync, readdirSync, readlinkSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { LOCK_FILE, lockRunFolder } from "@loop/train/node";
import { asCliError, CliError } from "../errors.js";
import { removeSeedRecords } from "./seed-record.js";
import { isGateStudy, isSweepStudy, type StudyName, sweepStudy } from "./studies.js";
import { SCALES } from "./study-types.js";

/**
 * The folders a study trains in, inside its --out folder: one per own arm of a sweep study (at
 * either scale: an old study may have run at the other), and one per seed of a gate study.
 */
export function studyFolders(outDir: string, study: StudyName): string[] {
  // (exit-rules trains nothing of its own: its models are gate-mixed's)
  if (!isSweepStudy(study) && !isGateStudy(study)) return [];
  if (isGateStudy(study)) {
    if (!existsSync(outDir)) return [];
    return readdirSync(outDir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && /^seed-\d+$/.test(d.name))
      .map((d) => d.name);
  }
  // a shared arm's folders are its lending study's (removed by that study's --overwrite)
  const sweep = study;
  const own = (s: (typeof SCALES)[number]) =>
    sweepStudy(sweep, s)
      .arms.filter((a) => !a.sharedWith)
      .map((a) => a.id);
  return [...new Set(SCALES.flatMap(own))];
}

/** A study folder renamed for removal by an --overwrite (and left there if it was killed). */
const REMOVING = /^\..+\.removing-\d+$/;

/** Every folder under `dir` (itself included) that holds a run lock. */
function lockedFolders(dir: string): string[] {
  const found = existsSync(join(dir, LOCK_FILE)) ? [dir] : [];
  for (const d of readdirSync(dir, { withFileTypes: true }))
    if (d.isDirectory()) found.push(...lockedFolders(join(dir, d.name)));
  return found;
}

/**
 * What a finished study wrote: its seed records (seed-<k>.json) first, then results.json,
 * results.md, report.html and its <study>-*.svg plots, then the folders it trained in
 * (`folders`: its sweeps' and members' runs, their downstream, cloze and per-length scores).
 * `--overwrite` removes them before anything else, so a replaced study that is interrupted never
 * shows the old study's results as its own, and a `--resume` after the interrupt can pick up
 * neither the old study's seeds nor its members or scores. A folder some live process is
 * training in (its run lock), or a link in place of one, is refused before anything is removed.
 */
export function removeStudyResults(
  outDir: string,
  study: string,
  folders: readonly string[] = [],
): string[] {
  if (!existsSync(outDir)) return [];
  // A link's folder is not this study folder's to empty; left in place, its old sweep would be
  // resumed: refused before anything is removed.
  const linked = folders.find((f) =>
    lstatSync(join(outDir, f), { throwIfNoEntry: false })?.isSymbolicLink(),
  );
  if (linked)
    throw new CliError(
      `${join(outDir, linked)} is a link (to ${readlinkSync(join(outDir, linked))}): --overwrite removes the folders a study trained in, not what a link points to; remove the link (or the old study in its folder) first`,
    );
  const trained = folders.filter((f) =>
    lstatSync(join(outDir, f), { throwIfNoEntry: false })?.isDirectory(),
  );
  const releases: (() => void)[] = [];
  try {
    for (const f of trained)
      for (const dir of lockedFolders(join(outDir, f)))
        releases.push(asCliError(() => lockRunFolder(dir)));
    const records = removeSeedRecords(outDir);
    const plots = readdirSync(outDir).filter(
      (f) => f.startsWith(`${study}-`) && f.endsWith(".svg"),
    );
    const gone = ["results.json", "results.md", "report.html", ...plots].filter((f) =>
      existsSync(join(outDir, f)),
    );
    for (const f of gone) rmSync(join(outDir, f), { force: true });
    // Each folder is first renamed out of the way (atomic), so a removal killed half-way leaves
    // no part of an old sweep for --resume to pick up; leftovers of such a kill go too.
    const doomed = readdirSync(outDir).filter((f) => REMOVING.test(f));
    for (const f of trained) {
      const away = `.${f}.removing-${process.pid}`;
      renameSync(join(outDir, f), join(outDir, away));
      doomed.push(away);
    }
    for (const f of doomed) rmSync(join(outDir, f), { recursive: true, force: true });
    return [...records, ...gone, ...trained];
  } finally {
    for (const release of releases) release();
  }
}
