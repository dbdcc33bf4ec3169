/*
 * An exclusive lock on a run folder: `run.lock` holds the owner's PID and host. It is created
 * atomically (written under a temporary name in the same folder, then hard-linked into place,
 * which fails if the lock exists), so two processes can never both hold it. A lock whose process
 * is gone (same host, PID no longer alive: a kill -9 or a power cut) is stale and taken over.
 * Within one process the lock is re-entrant, so a CLI can lock a folder before its long set-up
 * and the training loop can lock it again.
 */
import { linkSync, realpathSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { errnoCode, fsError, readInputText } from "@loop/tensor/node";

/** The lock file a process training in a run folder holds (its PID). */
export const LOCK_FILE = "run.lock";

interface LockOwner {
  pid: number;
  host: string;
  since: string;
}

/** Folders this process holds, by real path, with their re-entry count. */
const held = new Map<string, { path: string; count: number }>();
let exitHook = false;

/** Whether process `pid` runs (on this host). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errnoCode(e) === "EPERM"; // exists, owned by someone else
  }
}

function readOwner(path: string): LockOwner | null {
  try {
    // (by the one input rule: a FIFO there is no owner, never waited on)
    const o = JSON.parse(readInputText(path, { maxBytes: 64 * 1024 })) as LockOwner;
    return Number.isInteger(o.pid) ? o : null;
  } catch {
    return null;
  }
}

function tryCreate(lock: string, body: string): boolean {
  const tmp = `${lock}.tmp-${process.pid}-${Date.now()}`;
  try {
    writeFileSync(tmp, body, { flag: "wx" });
    linkSync(tmp, lock);
    return true;
  } catch (e) {
    if (errnoCode(e) === "EEXIST") return false;
    throw fsError("lock", lock, e);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * The live process holding `dir`'s lock, or null when the folder is free (no lock, or a stale one
 * that `lockRunFolder` would take over). A lock held by this process counts as free.
 */
export function runFolderHolder(dir: string): { pid: number; host: string } | null {
  const owner = readOwner(join(dir, LOCK_FILE));
  if (owner === null) return null;
  if (owner.host === hostname() && (owner.pid === process.pid || !processAlive(owner.pid)))
    return null;
  return { pid: owner.pid, host: owner.host };
}

/** Lock `dir` (which must exist) for this process; returns the release function. */
export function lockRunFolder(dir: string): () => void {
  const key = realpathSync(dir);
  const mine = held.get(key);
  if (mine) {
    mine.count++;
    return releaser(key);
  }
  const lock = join(dir, LOCK_FILE);
  const body = `${JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() })}\n`;
  for (let attempt = 0; ; attempt++) {
    if (tryCreate(lock, body)) break;
    const owner = readOwner(lock);
    const stale = owner === null || (owner.host === hostname() && !processAlive(owner.pid));
    if (!stale || attempt > 2) {
      throw new Error(
        `run folder ${dir} is in use by process ${owner?.pid ?? "?"}${owner && owner.host !== hostname() ? ` on ${owner.host}` : ""} (${lock}); wait for it to finish or stop it`,
      );
    }
    // A dead owner's lock (or an unreadable one left by a crash mid-write): take it over.
    rmSync(lock, { force: true });
  }
  held.set(key, { path: lock, count: 1 });
  if (!exitHook) {
    exitHook = true;
    process.on("exit", () => {
      for (const { path } of held.values()) rmSync(path, { force: true });
      held.clear();
    });
  }
  return releaser(key);
}

function releaser(key: string): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const h = held.get(key);
    if (!h || --h.count > 0) return;
    held.delete(key);
    try {
      unlinkSync(h.path);
    } catch (e) {
      if (errnoCode(e) !== "ENOENT") throw fsError("unlock", h.path, e);
    }
  };
}
