/**
 * `looplm generate --timing` ends with one JSON line on stderr — prefill and decode rates, those
 * of the first and the last 64 generated tokens, the mean exit step — on every backend: on the
 * CPU, and on the CUDA backend (host emulator) through the decoders written once for devices,
 * where the tokens equal the CPU's with an exit rule as without one.
 */
import { startEmulatedDevice } from "@loop/cuda/node";
import { parseExitRule } from "@loop/exit-gate";
import { emulatorSuiteRuns, goldenPath } from "@loop/test-support";
import { describe, expect, it, vi } from "vitest";
import { cudaComputeBackend } from "../backend.js";
import { runGenerate } from "./commands/generate.js";
import { run } from "./run-in-process.test-util.js";

const MODEL = goldenPath("mamba-2x2-gate");
const KEYS = ["prefill_tok_s", "decode_tok_s", "first64_tok_s", "last64_tok_s", "mean_exit_step"];

/** The JSON object on the last line of `err`. */
function timing(err: string): Record<string, number> {
  const last = err.trimEnd().split("\n").at(-1)!;
  return JSON.parse(last) as Record<string, number>;
}

const started = await startEmulatedDevice();
const runs = emulatorSuiteRuns("generate on the CUDA kernels of the host emulator", started);

describe("generate --timing", () => {
  it("prints the five rates on the CPU; the exit rule lowers the mean exit step", async () => {
    const args = ["generate", "--model", MODEL, "--tokens", "1,2,3", "--max-new", "70"];
    const full = await run(...args, "--temperature", "0", "--timing");
    const t = timing(full.err);
    expect(Object.keys(t)).toEqual(KEYS);
    for (const k of KEYS) expect(t[k], k).toBeGreaterThan(0);
    expect(t.mean_exit_step).toBe(2);
    const early = await run(...args, "--temperature", "0", "--timing", "--exit", "fixed:1");
    expect(timing(early.err).mean_exit_step).toBe(1);
    // without --timing, no JSON line
    const plain = await run(...args, "--temperature", "0");
    expect(plain.err).not.toContain("decode_tok_s");
  });

  it.runIf(runs)(
    "on cuda (emulated): the CPU's tokens, with and without an exit rule, and the timing line",
    async () => {
      const backend = cudaComputeBackend(started.ok ? started.device : (null as never));
      for (const exit of [[], ["entropy:0.6"]]) {
        const args = [
          "--model",
          MODEL,
          "--tokens",
          "1,2,3",
          "--max-new",
          "12",
          "--temperature",
          "0",
        ];
        const cpu = await run("generate", ...args, ...exit.flatMap((e) => ["--exit", e]));
        let out = "";
        let err = "";
        vi.spyOn(process.stdout, "write").mockImplementation((c) => {
          out += String(c);
          return true;
        });
        vi.spyOn(process.stderr, "write").mockImplementation((c) => {
          err += String(c);
          return true;
        });
        try {
          await runGenerate(
            {
              model: MODEL,
              tokens: "1,2,3",
              maxNew: 12,
              temperature: 0,
              topK: 0,
              seed: 0,
              timing: true,
              exit: exit.map(parseExitRule),
            },
            backend,
          );
        } finally {
          vi.restoreAllMocks();
        }
        expect(out).toBe(cpu.out);
        expect(Object.keys(timing(err))).toEqual(KEYS);
        if (exit.length) expect(err).toContain(cpu.err.split("\n")[0]!);
      }
      backend.stop();
    },
  );
});
