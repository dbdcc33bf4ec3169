/*
 * The flags of a `train` run, recorded in run.json so that `--resume` rebuilds exactly the run
 * that was started. With `--resume`, flags typed again must agree with the recorded ones, except
 * those naming what may change (more --steps, evaluation and checkpoint cadence, recomputation,
 * the backend).
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { CliError } from "./errors.js";

/**
 * Flags a resumed run may change. (A backend computes the same numbers within float32 rounding;
 * a run started on native kernels can go on where no C compiler is, and the other way round.)
 */
export const RESUMABLE_FLAGS = [
  "steps",
  "evalEvery",
  "evalCount",
  "ckptEvery",
  "checkpointing",
  "backend",
] as const;
/**
 * Resumable flags whose change is said in one line: they change no trained weight, but the
 * numbers logged from here on are not comparable with the earlier ones.
 */
const SAID_FLAGS = new Set(["evalCount"]);
/** Flags that say what to do with the folder (or what to print), not how the run trains. */
const ACTION_FLAGS = new Set(["out", "resume", "overwrite", "verbose"]);
/** Flags naming files or folders: recorded as absolute paths, so resume works from anywhere. */
const PATH_FLAGS = new Set(["from", "config", "corpus", "tokenizer"]);

function normalise(key: string, v: unknown): unknown {
  return PATH_FLAGS.has(key) && typeof v === "string" && existsSync(v) ? resolve(v) : v;
}

/** The flags to record in run.json. */
export function recordFlags(f: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(f))
    if (!ACTION_FLAGS.has(k) && v !== undefined) out[k] = normalise(k, v);
  return out;
}

/**
 * The flags of a resumed run: the recorded ones, with the resumable flags typed now. Any other
 * flag typed with a different value is an error naming it.
 */
export function resumeFlags<F extends object>(
  cmd: Command,
  typed: F,
  recorded: unknown,
  runJson: string,
): F {
  if (typeof recorded !== "object" || recorded === null)
    throw new CliError(
      `${runJson} does not record the flags of its run (an older looplm wrote it), so it cannot be resumed exactly`,
    );
  const rec = recorded as Record<string, unknown>;
  const merged: Record<string, unknown> = { ...rec };
  for (const [k, v] of Object.entries(typed)) {
    if (ACTION_FLAGS.has(k)) {
      merged[k] = v;
      continue;
    }
    if (cmd.getOptionValueSource(k) !== "cli") continue;
    if ((RESUMABLE_FLAGS as readonly string[]).includes(k)) {
      if (
        SAID_FLAGS.has(k) &&
        rec[k] !== undefined &&
        JSON.stringify(v) !== JSON.stringify(rec[k])
      ) {
        const flag = cmd.options.find((o) => o.attributeName() === k)?.long ?? k;
        process.stderr.write(
          `looplm: ${flag} ${JSON.stringify(v)} replaces ${JSON.stringify(rec[k])} of the run being resumed: the model trains the same; its evaluations from here on use ${JSON.stringify(v)}\n`,
        );
      }
      merged[k] = v;
      continue;
    }
    const now = normalise(k, v);
    if (JSON.stringify(now) !== JSON.stringify(rec[k])) {
      const flag = cmd.options.find((o) => o.attributeName() === k)?.long ?? k;
      const was = rec[k] === undefined ? "not given" : JSON.stringify(rec[k]);
      throw new CliError(
        `${flag} ${JSON.stringify(now)} differs from the run being resumed (${was} in ${runJson}); with --resume only ${RESUMABLE_FLAGS.map((r) => cmd.options.find((o) => o.attributeName() === r)?.long ?? r).join(", ")} may change`,
      );
    }
  }
  return merged as F;
}
