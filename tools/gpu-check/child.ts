/**
 * A phase's child process: its output goes to a log file in the report's folder (and is kept for
 * parsing), it runs in its own process group so a timeout ends it and everything it started, and
 * it answers with its exit status and wall-clock.
 */
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";

export interface ChildResult {
  /** Exit code; null when killed. */
  code: number | null;
  timedOut: boolean;
  /** stdout and stderr, interleaved as they came. */
  output: string;
  seconds: number;
}

/** The process groups still running, ended by `stopChildren` (Ctrl-C, SIGTERM). */
const live = new Set<number>();

/** End every child process group still running (they are detached: a terminal's Ctrl-C misses them). */
export function stopChildren(): void {
  for (const pid of live) {
    try {
      process.kill(-pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  live.clear();
}

export function runChild(
  command: string,
  args: readonly string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; log: string; timeoutMs: number },
): Promise<ChildResult> {
  const t0 = performance.now();
  const log = createWriteStream(opts.log);
  log.write(`$ ${command} ${args.join(" ")}\n`);
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    if (child.pid !== undefined) live.add(child.pid);
    let output = "";
    const take = (c: Buffer) => {
      output += c.toString("utf8");
      log.write(c);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, opts.timeoutMs);
    let finished = false;
    const done = (code: number | null, extra = "") => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (child.pid !== undefined) live.delete(child.pid);
      if (extra) take(Buffer.from(extra));
      log.end(() => resolve({ code, timedOut, output, seconds: (performance.now() - t0) / 1000 }));
    };
    child.on("error", (e) => done(null, `\n${command}: ${e.message}\n`));
    child.on("close", (code) => done(code));
  });
}

/** The environment for the phases' children: this one, less what a parent vitest set, no colours. */
export function childEnv(base: NodeJS.ProcessEnv, set: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // a nested vitest reads its parent's worker variables as its own; colours would litter the logs
  for (const [k, v] of Object.entries(base))
    if (!/^(__)?VITEST/.test(k) && k !== "FORCE_COLOR") env[k] = v;
  return { ...env, NO_COLOR: "1", ...set };
}
