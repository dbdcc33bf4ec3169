import { checkWritableFile } from "@loop/tensor/node";
import { Option } from "commander";

/** Fail now, before any long work, if the output file `path` cannot be written. */
export function checkOutput(path: string): void {
  asCliError(() => checkWritableFile(path));
}

/** `fn()` (awaited when it returns a promise), a library's error turned into a CliError. */
export function asCliError<T>(fn: () => T): T {
  const fail = (e: unknown): never => {
    throw e instanceof CliError ? e : new CliError((e as Error).message);
  };
  try {
    const r = fn();
    return (r instanceof Promise ? r.catch(fail) : r) as T;
  } catch (e) {
    return fail(e);
  }
}

/** An expected, user-facing failure: printed as one line without a stack trace. */
export class CliError extends Error {
  /** The error's name. */
  override name = "CliError";
  /** The process exit status (1; 130/143 after SIGINT/SIGTERM). */
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** The largest value an integer flag takes, and why (said when a larger one is refused). */
export interface IntMax {
  max: number;
  why: string;
}

/** Parse an integer option, failing with a message naming the flag. */
export function intOption(
  flag: string,
  min = Number.NEGATIVE_INFINITY,
  most?: IntMax,
): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (!/^[-+]?\d+$/.test(v.trim())) throw new CliError(`${flag} must be an integer, got "${v}"`);
    // (beyond 2^53 − 1 a number is no longer exact: 9007199254740993 would read as ...992)
    if (!Number.isSafeInteger(n))
      throw new CliError(
        `${flag} ${v.trim()} exceeds the largest safe integer (${Number.MAX_SAFE_INTEGER})`,
      );
    if (n < min) throw new CliError(`${flag} must be ≥ ${min}, got ${n}`);
    if (most && n > most.max)
      throw new CliError(
        `${flag} ${n} is more than ${most.max}, its largest (${most.why}); lower it`,
      );
    return n;
  };
}

/**
 * The option `spec` taking an integer ≥ `min`, with default `value`: what `.option(spec,
 * description, intOption(flag, min), value)` adds, the flag (spec's first word) named once.
 */
export function intFlag(
  spec: string,
  description: string,
  min?: number,
  value?: number,
  most?: IntMax,
): Option {
  const flag = spec.split(" ")[0]!;
  return new Option(spec, description).default(value).argParser(intOption(flag, min, most));
}

/** The option `spec` taking a number, with default `value` (as intFlag). */
export function floatFlag(spec: string, description: string, value?: number): Option {
  const flag = spec.split(" ")[0]!;
  return new Option(spec, description).default(value).argParser(floatOption(flag));
}

/** Parse a float option, failing with a message naming the flag. */
export function floatOption(flag: string): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (v.trim() === "" || !Number.isFinite(n))
      throw new CliError(`${flag} must be a number, got "${v}"`);
    return n;
  };
}

/** Parse an option that takes one of `values`, failing with a message naming the flag. */
export function choiceOption<T extends string>(
  flag: string,
  values: readonly T[],
): (v: string) => T {
  return (v: string) => {
    if (!(values as readonly string[]).includes(v))
      throw new CliError(`${flag} must be one of ${values.join(", ")}, got "${v}"`);
    return v as T;
  };
}
