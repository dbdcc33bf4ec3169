/*
 * Shared arms (ArmDef.sharedWith): an arm of one study that is the very sweep of another study's
 * arm. Its settings are checked equal when the borrowing study is built, so both studies read
 * one set of folders and the members train once. When one study's process trains that sweep
 * at this moment (a live process holds its run lock), the other study waits for it instead of
 * failing, then continues what it left; the borrower waits for the lender and the lender for the
 * borrower.
 */
import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { runFolderHolder } from "@loop/train/node";
import { WatchInterrupted } from "../interrupt.js";
import { armSweepFlags } from "./arm-inputs.js";
import type { ArmDef, StudyDef } from "./study-types.js";

/**
 * `arm`, declared the same sweep as `lender` (arm `lender.id` of study `study`): throws, naming
 * the first flag that differs, unless their sweep flags are equal.
 */
export function shareArm(arm: ArmDef, study: string, lender: ArmDef): ArmDef {
  const [mine, theirs] = [armSweepFlags(arm), armSweepFlags(lender)];
  // the first position where they differ (one ending before the other counts)
  for (let i = 0; i < Math.max(mine.length, theirs.length); i++) {
    if (mine[i] === theirs[i]) continue;
    throw new Error(
      `arm ${arm.id} is declared the same sweep as ${study}'s ${lender.id}, but its flags differ at ${JSON.stringify(mine[i] ?? "(end)")} against ${JSON.stringify(theirs[i] ?? "(end)")}`,
    );
  }
  return { ...arm, sharedWith: { study, arm: lender.id } };
}

/**
 * How `arm`'s sweep folder is opened given the study's own resume/overwrite: a shared arm's
 * folder is its lending study's, so it is always continued and never replaced from here.
 */
export function armFolderMode(
  arm: ArmDef,
  o: { resume: boolean; overwrite?: boolean },
): { resume: boolean; overwrite: boolean } {
  const shared = arm.sharedWith !== undefined;
  return { resume: o.resume || shared, overwrite: (o.overwrite ?? false) && !shared };
}

export interface WaitOptions {
  signal?: AbortSignal;
  log?: (line: string) => void;
  /** How often the lock is looked at (default 15 s). */
  pollMs?: number;
}

/**
 * Wait while another process trains the shared sweep folder `dir` of `def`'s arm `arm` (a
 * borrowed arm, or one that `def.lentTo` says another study borrows); no wait for an arm no
 * other study shares, a missing folder or a free one. An abort ends the wait with a
 * `WatchInterrupted`.
 */
export async function waitForSharedSweep(
  def: Pick<StudyDef, "lentTo">,
  arm: ArmDef,
  dir: string,
  o: WaitOptions = {},
): Promise<void> {
  const borrowers = def.lentTo?.[arm.id] ?? [];
  if ((!arm.sharedWith && borrowers.length === 0) || !existsSync(dir)) return;
  const what = arm.sharedWith
    ? `${arm.sharedWith.study}'s ${arm.sharedWith.arm} sweep`
    : `also ${borrowers.join(" and ")}'s sweep (a shared arm)`;
  let said = false;
  for (;;) {
    const holder = runFolderHolder(dir);
    if (holder === null) return;
    const who = `process ${holder.pid}${holder.host ? ` on ${holder.host}` : ""}`;
    if (o.signal?.aborted)
      throw new WatchInterrupted(`was waiting for ${dir}, which ${who} trains`);
    if (!said)
      o.log?.(`${arm.id} is ${what}, which ${who} is training in ${dir}: waiting for it to finish`);
    said = true;
    try {
      await sleep(o.pollMs ?? 15000, undefined, { signal: o.signal });
    } catch {
      // aborted: the loop's next look says so
    }
  }
}
