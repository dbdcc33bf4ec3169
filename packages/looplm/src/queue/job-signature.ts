/*
 * Signed jobs (optional, as Celery's signed messages): with a secret shared by the coordinator
 * and the workers (`--secret` or LOOPLM_QUEUE_SECRET), every job carries an HMAC-SHA256 of its
 * content, and a worker with the secret trains only jobs whose HMAC matches. Whoever can write
 * to Redis without the secret can then neither forge a job nor alter one.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { canonicalJson } from "@loop/train/node";
import { CliError } from "../cli/errors.js";

/** The environment variable that holds the secret when `--secret` is not given. */
export const SECRET_ENV = "LOOPLM_QUEUE_SECRET";

/** Help of the coordinators' `--secret` option (sweep and reproduce with --queue). */
export const SIGN_HELP = `with --queue: sign every job with this shared secret (HMAC-SHA256; workers given the same secret train only signed jobs); default: $${SECRET_ENV}`;

/** A job's content: everything but its signature, as JSON carries it (undefined dropped). */
export function jobContent<T extends object>(data: T): Omit<T, "sig"> {
  const { sig: _sig, ...rest } = data as T & { sig?: unknown };
  return JSON.parse(JSON.stringify(rest)) as Omit<T, "sig">;
}

export function signJob(data: object, secret: string): string {
  return createHmac("sha256", secret)
    .update(canonicalJson(jobContent(data)))
    .digest("hex");
}

/** Null when `data` is signed with `secret`, else why not (for a one-line refusal). */
export function signatureProblem(data: object, secret: string): string | null {
  const sig = (data as { sig?: unknown }).sig;
  if (sig === undefined)
    return `it is not signed, and this worker trains only signed jobs (--secret / ${SECRET_ENV})`;
  const want = Buffer.from(signJob(data, secret), "hex");
  const got =
    typeof sig === "string" && /^[0-9a-f]{64}$/.test(sig) ? Buffer.from(sig, "hex") : null;
  if (!got || !timingSafeEqual(got, want))
    return "its signature does not match its content (altered, or signed with another secret)";
  return null;
}

/** The secret from `--secret` or the environment; an empty one is refused. */
export function queueSecret(flag: string | undefined): string | undefined {
  const s = flag ?? process.env[SECRET_ENV];
  if (s === undefined) return undefined;
  if (s.length < 16)
    throw new CliError(
      `${flag !== undefined ? "--secret" : SECRET_ENV} must be at least 16 characters (a long random string, e.g. openssl rand -hex 32)`,
    );
  return s;
}
