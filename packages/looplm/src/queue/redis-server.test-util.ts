/**
 * Test support: a real Debian `redis-server` on 127.0.0.1 and a free port (optionally with an
 * append-only file, to survive being killed), and `looplm` CLI processes with captured output.
 * Every wait is a bounded loop; a missing redis-server fails the test with what to install.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect } from "vitest";

export async function waitFor<T>(
  what: string,
  probe: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  tries = 1200,
  everyMs = 50,
): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await probe();
    if (v) return v;
    await sleep(everyMs);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

export interface RedisServer {
  port: number;
  url: string;
  /** Start it (again, on the same port and data folder). */
  start(): Promise<void>;
  /** SIGKILL: no chance to save anything beyond what the append-only file already holds. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export function requireRedisServer(): void {
  const r = spawnSync("redis-server", ["--version"], { encoding: "utf8" });
  if (r.error)
    throw new Error(
      "redis-server is not installed: the queue tests need it (apt-get install -y redis-server; .ci/run installs it)",
    );
}

export async function redisServer(
  o: { persist?: boolean; password?: string } = {},
): Promise<RedisServer> {
  requireRedisServer();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "looplm-redis-"));
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", ""];
  args.push("--appendonly", o.persist ? "yes" : "no");
  if (o.persist) args.push("--appendfsync", "always");
  if (o.password) args.push("--requirepass", o.password);
  let proc: ChildProcess | null = null;
  const exited = (p: ChildProcess) =>
    p.exitCode !== null || p.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((r) => p.once("exit", () => r()));
  const server: RedisServer = {
    port,
    url: `redis://${o.password ? `:${o.password}@` : ""}127.0.0.1:${port}`,
    async start() {
      proc = spawn("redis-server", args, { stdio: "ignore" });
      await waitFor(`redis-server on port ${port}`, async () => {
        const c = new Redis({
          port,
          host: "127.0.0.1",
          password: o.password,
          lazyConnect: true,
          retryStrategy: () => null,
          maxRetriesPerRequest: 0,
        });
        c.on("error", () => {});
        try {
          await c.connect();
          return (await c.ping()) === "PONG";
        } catch {
          return false;
        } finally {
          c.disconnect();
        }
      });
    },
    async kill() {
      if (!proc) return;
      proc.kill("SIGKILL");
      await exited(proc);
      proc = null;
    },
    async stop() {
      if (!proc) return;
      proc.kill("SIGTERM");
      await exited(proc);
      proc = null;
    },
  };
  await server.start();
  return server;
}

/**
 * A plain redis-server for the enclosing suite: started before its tests, stopped after them.
 * Its url and port read the running server, so they are for the tests, not the suite's body.
 */
export function useRedisServer(): Pick<RedisServer, "url" | "port"> {
  let server: RedisServer | undefined;
  beforeAll(async () => {
    server = await redisServer();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });
  const started = (): RedisServer => {
    if (!server) throw new Error("the suite's redis-server is not started yet");
    return server;
  };
  return {
    get url() {
      return started().url;
    },
    get port() {
      return started().port;
    },
  };
}

/**
 * A pause point for a worker's training processes (train-child.ts, LOOPLM_PAUSE_AT_STEP): the
 * env to start the worker with, a wait for the pause (which member, where), and its release.
 */
export function pausePoint(step: number) {
  const file = join(mkdtempSync(join(tmpdir(), "looplm-pause-")), "paused.json");
  return {
    env: { LOOPLM_PAUSE_AT_STEP: `${step}:${file}` },
    /** Resolves once a training process has logged and checkpointed `step` and waits there. */
    reached: () =>
      waitFor(`a training process to pause at step ${step}`, () =>
        existsSync(file)
          ? (JSON.parse(readFileSync(file, "utf8")) as { label: string; runDir: string })
          : null,
      ),
    release: () => {
      writeFileSync(`${file}.released`, "");
      rmSync(file, { force: true });
    },
  };
}

const main = fileURLToPath(new URL("../cli/main.ts", import.meta.url));

export interface CliProcess {
  proc: ChildProcess;
  out(): string;
  err(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `looplm …` as a real process (from source), one compute thread, `env` added. */
export function looplm(args: string[], env: NodeJS.ProcessEnv = {}): CliProcess {
  const proc = spawn(
    process.execPath,
    ["--import", "tsx", "--conditions=@loop/source", main, ...args],
    { env: { ...process.env, LOOPLM_THREADS: "1", ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  proc.stdout!.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  proc.stderr!.on("data", (c: Buffer) => {
    err += c.toString("utf8");
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    proc.on("close", (code, signal) => r({ code, signal })),
  );
  return { proc, out: () => out, err: () => err, exited };
}

/**
 * Each CLI process failed as bad input must: exit 1 with one line on stderr that never shows
 * `secret` (a password in a --queue URL). Returns those lines, in order.
 */
export async function oneLineFailures(runs: CliProcess[], secret: string): Promise<string[]> {
  const lines: string[] = [];
  for (const r of runs) {
    expect((await r.exited).code, r.err()).toBe(1);
    expect(r.err()).not.toContain(secret);
    expect(r.err().trim().split("\n")).toHaveLength(1);
    lines.push(r.err().trim());
  }
  return lines;
}
