/**
 * Test support: the `looplm` program run in this process (no child, so a test can drive many
 * commands cheaply), its stdout and stderr captured.
 */
import { vi } from "vitest";
import { buildProgram } from "./program.js";

/** Run the program in-process: what it wrote, and the error it ended with (if any). */
export async function capture(
  ...args: string[]
): Promise<{ out: string; err: string; error?: Error }> {
  let out = "";
  let err = "";
  const grab = (sink: (s: string) => void) => (c: string | Uint8Array) => {
    sink(typeof c === "string" ? c : Buffer.from(c).toString("utf8"));
    return true;
  };
  vi.spyOn(process.stdout, "write").mockImplementation(grab((s) => (out += s)));
  vi.spyOn(process.stderr, "write").mockImplementation(grab((s) => (err += s)));
  try {
    await buildProgram().parseAsync(["node", "looplm", ...args]);
    return { out, err };
  } catch (e) {
    return { out, err, error: e as Error };
  } finally {
    vi.restoreAllMocks();
  }
}

/** Run the program in-process; returns stdout and stderr, or rejects with the error. */
export async function run(...args: string[]): Promise<{ out: string; err: string }> {
  const r = await capture(...args);
  if (r.error) throw r.error;
  return { out: r.out, err: r.err };
}
