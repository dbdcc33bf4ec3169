/**
 * Where the job queue lives: a `redis://` or `rediss://` URL parsed into ioredis options, and a
 * start-up check that turns every way of not reaching Redis into one line naming the problem.
 * After start-up BullMQ's own reconnection (back-off up to 20 s) rides out Redis restarts.
 */
import { Redis, type RedisOptions } from "ioredis";
import { CliError } from "../cli/errors.js";

export interface QueueAddress {
  /** ioredis connection options (host, port, db, credentials, TLS). */
  options: RedisOptions;
  /** The URL without its password, for messages. */
  display: string;
}

const FORM = "redis://[user:password@]host:port[/db] or rediss://… (TLS)";

export function parseQueueUrl(url: string): QueueAddress {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new CliError(`--queue must be ${FORM}, got "${url}"`);
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:")
    throw new CliError(`--queue must be ${FORM}, got "${url}"`);
  if (!u.hostname) throw new CliError(`--queue needs a host: ${FORM}, got "${url}"`);
  const path = u.pathname.replace(/^\//, "");
  if (path !== "" && !/^\d+$/.test(path))
    throw new CliError(`--queue database must be a number (redis://host:port/0), got "/${path}"`);
  const options: RedisOptions = {
    host: u.hostname.replace(/^\[|\]$/g, ""),
    port: u.port ? Number(u.port) : 6379,
    db: path === "" ? 0 : Number(path),
  };
  if (u.username) options.username = decodeURIComponent(u.username);
  if (u.password) options.password = decodeURIComponent(u.password);
  if (u.protocol === "rediss:") options.tls = { servername: options.host! };
  const shown = new URL(u.href);
  if (shown.password) shown.password = "***";
  return { options, display: shown.href.replace(/\/$/, "") };
}

/** One line for a failure to talk to Redis at `a`. */
export function describeRedisError(a: QueueAddress, e: unknown): string {
  const err = e as { code?: string; message?: string };
  const msg = err.message ?? String(e);
  const where = `Redis at ${a.display}`;
  if (err.code === "ECONNREFUSED" || /ECONNREFUSED/.test(msg))
    return `cannot reach ${where}: connection refused (is redis-server running there?)`;
  if (err.code === "ENOTFOUND" || err.code === "EAI_AGAIN" || /ENOTFOUND|EAI_AGAIN/.test(msg))
    return `cannot reach ${where}: unknown host "${a.options.host}"`;
  if (/ETIMEDOUT|timed? ?out/i.test(msg)) return `cannot reach ${where}: timed out`;
  if (/NOAUTH/.test(msg))
    return `${where} needs a password: give it in the URL, redis://:PASSWORD@host:port`;
  if (/WRONGPASS|invalid (username|password)/i.test(msg))
    return `${where} rejected the user name or password`;
  if (/without any password configured|AUTH.*no password/i.test(msg))
    return `${where} has no password set, but the URL gives one`;
  if (/ECONNRESET/.test(msg) && !a.options.tls)
    return `${where}: connection reset (if the server speaks TLS, use rediss://)`;
  if (/certificate|CERT_|SSL/i.test(`${err.code ?? ""} ${msg}`))
    return `${where}: TLS: ${msg.split("\n")[0]} (NODE_EXTRA_CA_CERTS=ca.pem trusts your own CA)`;
  if (/DB index is out of range/i.test(msg))
    return `${where}: database ${a.options.db} does not exist`;
  return `${where}: ${msg.split("\n")[0]}`;
}

/** Connect once, without retrying, and PING: fail fast with one line when Redis is unusable. */
export async function checkRedis(a: QueueAddress): Promise<void> {
  const r = new Redis({
    ...a.options,
    lazyConnect: true,
    connectTimeout: 5000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  let lastError: unknown = null;
  r.on("error", (e) => {
    lastError = e;
  });
  try {
    await r.connect();
    await r.ping();
  } catch (e) {
    throw new CliError(describeRedisError(a, lastError ?? e));
  } finally {
    r.disconnect();
  }
}

/** Options for BullMQ's own connections: retry forever with its back-off, never drop commands. */
export function bullConnection(a: QueueAddress): RedisOptions {
  return { ...a.options, maxRetriesPerRequest: null };
}
