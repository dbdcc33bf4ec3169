/*
 * Text from outside this process (a queued job's label, run folder and failure reason, a worker's
 * name, anything read back from Redis) is printed through `printable`: control characters are
 * written as escapes, so such text cannot move the cursor, recolour or clear the terminal, or
 * forge a line of its own (`\nlooplm: all jobs done`) in a log.
 */

/** C0 and C1 controls, DEL, line/paragraph separators and the bidirectional overrides. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** `s` with every control character escaped (`\n`, `\x1b`, `\u202e`). */
export function printable(s: unknown): string {
  return String(s).replace(CONTROL, (c) => {
    const named = NAMED[c];
    if (named) return named;
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16)}`;
  });
}
