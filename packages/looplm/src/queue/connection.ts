/*
 * Where the job queue lives: a `redis://` or `rediss://` URL parsed into ioredis options, and a
 * start-up check that turns every way of not reaching Redis into one line naming the problem.
 * After start-up BullMQ's own reconnection (back-off up to 20 s) rides out Redis restarts.
 */
import { connect, isIP } from "node:net";
import { Redis, type RedisOptions } from "ioredis";
import { CliError } from "../cli/errors.js";
import { printable } from "../cli/printable.js";

export interface QueueAddress {
  /** ioredis connection options (host, port, db, credentials, TLS). */
  options: RedisOptions;
  /** The URL without its password (displayQueueUrl), control characters escaped, for messages. */
  display: string;
}

const FORM = "redis://[user:password@]host:port[/db] or rediss://… (TLS)";

/**
 * A queue URL as every message shows it: its password (everything between the user name's ":"
 * and the last "@", or the whole user part when it has no ":") replaced by ***. Works on any
 * string, so a URL too malformed to parse is shown masked too.
 */
export function displayQueueUrl(url: string): string {
  const at = url.lastIndexOf("@");
  if (at < 0) return url;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(url)?.[0] ?? "";
  const user = url.slice(scheme.length, at);
  const colon = user.indexOf(":");
  const shown = colon < 0 ? "***" : `${user.slice(0, colon)}:***`;
  return `${scheme}${shown}${url.slice(at)}`;
}

export function parseQueueUrl(url: string): QueueAddress {
  const quoted = `"${printable(displayQueueUrl(url))}"`;
  // (not a URL at all, or another scheme)
  const u = URL.canParse(url) ? new URL(url) : null;
  if (u?.protocol !== "redis:" && u?.protocol !== "rediss:")
    throw new CliError(`--queue must be ${FORM}, got ${quoted}`);
  if (!u.hostname) throw new CliError(`--queue needs a host: ${FORM}, got ${quoted}`);
  const path = u.pathname.replace(/^\//, "");
  if (path !== "" && !/^\d+$/.test(path))
    throw new CliError(
      `--queue database must be a number (redis://host:port/0), got "/${printable(path)}"`,
    );
  const options: RedisOptions = {
    host: u.hostname.replace(/^\[|\]$/g, ""),
    port: u.port ? Number(u.port) : 6379,
    db: path === "" ? 0 : Number(path),
  };
  if (u.username) options.username = percentDecoded(u.username, "user name");
  if (u.password) options.password = percentDecoded(u.password, "password");
  // (SNI takes host names only: an IP address as servername is deprecated and ignored)
  if (u.protocol === "rediss:")
    options.tls = isIP(options.host!) ? {} : { servername: options.host! };
  return { options, display: printable(displayQueueUrl(u.href.replace(/\/$/, ""))) };
}

/** `part` of the URL (user name or password) decoded; a malformed %-escape is named, not shown. */
function percentDecoded(text: string, part: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new CliError(
      `--queue: the ${part} in the URL has a malformed %-escape (a % must be followed by two hex digits; write a literal % as %25)`,
    );
  }
}

/** One line for a failure to talk to Redis at `a`. */
export function describeRedisError(a: QueueAddress, e: unknown): string {
  const err = e as { code?: string; message?: string };
  // (a client or server message never echoes the password; should one ever, it is masked here)
  const pw = a.options.password;
  const raw = (err.message ?? String(e)).split("\n")[0]!;
  const msg = printable(pw ? raw.split(pw).join("***") : raw);
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
    return `${where}: TLS: ${msg} (NODE_EXTRA_CA_CERTS=ca.pem trusts your own CA)`;
  if (/DB index is out of range/i.test(msg))
    return `${where}: the server has no database ${a.options.db} (the number after the port)`;
  return `${where}: ${msg}`;
}

/** Connect once, without retrying, and PING: fail fast with one line when Redis is unusable. */
export async function checkRedis(a: QueueAddress): Promise<void> {
  const r = new Redis({
    ...a.options,
    // (database 0 to connect; the URL's database is selected below, where a failure is seen)
    db: 0,
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
    // rediss:// to a server that takes the connection but not TLS (a plain Redis) times out or
    // fails inside the handshake: say so rather than "timed out"
    const err = lastError ?? e;
    const text = `${(err as { code?: string })?.code ?? ""} ${(err as Error)?.message ?? ""}`;
    if (
      a.options.tls &&
      HANDSHAKE_FAILURE.test(text) &&
      (await tcpAnswers(a.options.host!, a.options.port!))
    )
      throw new CliError(tlsHandshakeFailed(a, err));
    throw new CliError(describeRedisError(a, err));
  }
  try {
    // ioredis selects the URL's database itself, but a SELECT that fails leaves the connection
    // on database 0 with only an "error" event: ask here, so that jobs never land in database 0.
    await r.select(a.options.db ?? 0);
  } catch {
    let count = "";
    try {
      const [, n] = (await r.config("GET", "databases")) as [string, string];
      count = ` (it has ${n}: 0–${Number(n) - 1})`;
    } catch {
      // CONFIG may be disabled (managed Redis): say it without the count
    }
    throw new CliError(
      `Redis at ${a.display} has no database ${a.options.db}${count}: choose one it has with the number after the port, redis://host:port/<db>`,
    );
  } finally {
    r.disconnect();
  }
}

/** How a TLS handshake with a server that does not speak TLS ends (no answer, or garbage). */
const HANDSHAKE_FAILURE =
  /ETIMEDOUT|timed? ?out|ECONNRESET|EPROTO|wrong version number|packet length|disconnected before secure/i;

/** Whether a plain TCP connection to host:port opens within 5 s. */
function tcpAnswers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(5000, () => done(false));
    s.once("connect", () => done(true));
    s.once("error", () => done(false));
  });
}

/** The line for a TLS handshake that failed with a server that accepts TCP connections. */
function tlsHandshakeFailed(a: QueueAddress, e: unknown): string {
  const raw = ((e as { message?: string })?.message ?? String(e)).split("\n")[0]!;
  const pw = a.options.password;
  const msg = printable(pw ? raw.split(pw).join("***") : raw);
  const why = /ETIMEDOUT|timed? ?out/i.test(msg) ? "the server never answered it" : msg;
  return `Redis at ${a.display}: the TLS handshake failed (${why}); the server takes connections but does not speak TLS there: if it is a plain Redis, use redis://`;
}

/** Options for BullMQ's own connections: retry forever with its back-off, never drop commands. */
export function bullConnection(a: QueueAddress): RedisOptions {
  return { ...a.options, maxRetriesPerRequest: null };
}
