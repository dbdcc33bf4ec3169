/*
 * Test support: the `looplm` binary run as a child process (node on the source through tsx, or
 * under `pnpm looplm`), for tests about what only a real process shows: signals, pipes, exit
 * statuses, launchers. Also a small saved run folder for the commands that read one.
 */
import { type ChildProcess, type SpawnSyncReturns, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LoopedModel, makeConfig } from "@loop/looped";
import { saveCheckpoint } from "@loop/looped/node";

const MAIN = fileURLToPath(new URL("./main.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../../../..", import.meta.url));

/** Node's arguments that run the looplm binary from source (add the command's). */
export const CLI_NODE_ARGS = ["--import", "tsx", "--conditions=@loop/source", MAIN];

/**
 * Start `looplm …args` on one thread (`LOOPLM_THREADS=1`): node on the source, or under
 * `pnpm looplm` from the repository root when `viaPnpm`. Its stdout and stderr are pipes the
 * caller reads or resumes.
 */
export function spawnCli(args: string[], viaPnpm = false): ChildProcess {
  const env = { ...process.env, LOOPLM_THREADS: "1" };
  return viaPnpm
    ? spawn("pnpm", ["looplm", ...args], { cwd: ROOT, env })
    : spawn(process.execPath, [...CLI_NODE_ARGS, ...args], { env });
}

/**
 * Run `looplm …args` in bash followed by `shell` (redirections, a pipe into `head`…), waiting
 * for it; the default thread count, since the shell's pipeline is what such tests are about.
 */
export function cliInShell(
  args: string[],
  shell: string,
  timeout?: number,
): SpawnSyncReturns<string> {
  return spawnSync("bash", ["-c", `"$NODE" "$@" ${shell}`, "bash", ...CLI_NODE_ARGS, ...args], {
    encoding: "utf8",
    env: { ...process.env, NODE: process.execPath },
    timeout,
  });
}

/**
 * The first match of `pattern` in what the child writes on `streams` (accumulated); rejects
 * naming the output when the child exits first or after 90 seconds.
 */
export function untilOutput(
  child: ChildProcess,
  pattern: RegExp,
  streams: ("stdout" | "stderr")[] = ["stderr"],
): Promise<string> {
  let seen = "";
  return new Promise<string>((resolve, reject) => {
    const t = setTimeout(
      () => reject(new Error(`no output matching ${pattern}; output: ${seen}`)),
      90_000,
    );
    const hear = (c: Buffer) => {
      seen += c.toString();
      const m = pattern.exec(seen);
      if (m) {
        clearTimeout(t);
        resolve(m[0]);
      }
    };
    for (const s of streams) child[s]!.on("data", hear);
    child.on("exit", () => {
      clearTimeout(t);
      reject(new Error(`exited early; output: ${seen}`));
    });
  });
}

/** Whether process `pid` is still there. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Process ids below `pid`, children and theirs. */
export function descendants(pid: number): number[] {
  const r = spawnSync("pgrep", ["-P", String(pid)], { encoding: "utf8" });
  return r.stdout
    .split("\n")
    .filter(Boolean)
    .map(Number)
    .flatMap((k) => [k, ...descendants(k)]);
}

/**
 * A run folder in a fresh temporary folder (named after `prefix`) as `looplm train` leaves it:
 * a tiny untrained Mamba-2 model in `final/` and a run.json on the mano task.
 */
export function savedTinyRun(prefix: string): string {
  const runDir = join(mkdtempSync(join(tmpdir(), prefix)), "run");
  const cfg = makeConfig({
    backbone: "mamba",
    vocab_size: 32,
    d_model: 16,
    n_layers: 1,
    n_loops: 2,
    ssm: { d_state: 8, headdim: 8, chunk_size: 8 },
  });
  saveCheckpoint(join(runDir, "final"), new LoopedModel(cfg, { seed: 1 }));
  writeFileSync(
    join(runDir, "run.json"),
    JSON.stringify({ task: { name: "mano", max_ops: 2 }, model: cfg, train: {} }),
  );
  return runDir;
}

/** What `cliWithin` saw: the exit status and the child's stderr. */
export interface BoundedRun {
  status: number | null;
  stderr: string;
}

/**
 * Run `looplm …args` (one thread) as a child killed after `limitMs`; a child that had to be
 * killed throws, naming the command and its output, so a hang fails the test, not the suite.
 */
export function cliWithin(args: string[], limitMs = 60_000): BoundedRun {
  const r = spawnSync(process.execPath, [...CLI_NODE_ARGS, ...args], {
    encoding: "utf8",
    env: { ...process.env, LOOPLM_THREADS: "1" },
    timeout: limitMs,
    killSignal: "SIGKILL",
  });
  if (r.error || r.signal)
    throw new Error(
      `looplm ${args.join(" ")} hung (killed after ${limitMs} ms); stderr: ${r.stderr}`,
    );
  return { status: r.status, stderr: r.stderr };
}
