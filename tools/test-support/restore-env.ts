/**
 * Tests that set environment variables (paths to a toolchain, a driver, a cache) must not leak
 * them into the next test: this puts each named variable back after every test, unset where it
 * was unset when the file loaded.
 */
import { afterEach } from "vitest";

/** After each test of the file, `keys` of process.env hold what they held at load time. */
export function restoreEnvAfterEach(keys: readonly string[]): void {
  const saved = { ...process.env };
  afterEach(() => {
    for (const k of keys)
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
  });
}
