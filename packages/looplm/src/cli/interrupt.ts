/**
 * SIGINT/SIGTERM during training: the first signal asks the training loop (through an
 * AbortSignal) to finish its current step, checkpoint and stop; the command then prints how to
 * resume and exits 130 (SIGINT) or 143 (SIGTERM). A second signal exits at once — every file is
 * written atomically, so even that leaves a resumable folder.
 */
import { RunInterrupted } from "@loop/train/node";
import { CliError } from "./errors.js";

const CODES = { SIGINT: 130, SIGTERM: 143 } as const;
type Sig = keyof typeof CODES;

/**
 * Run `work` with the signal handlers installed; `resumeHint` is the command that continues it.
 * A `RunInterrupted` becomes a CliError with the signal's exit status.
 */
export async function withInterrupts<T>(
  resumeHint: string,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const ac = new AbortController();
  let got: Sig | null = null;
  const handlers = (Object.keys(CODES) as Sig[]).map((sig) => {
    const h = () => {
      if (got) process.exit(CODES[sig]);
      got = sig;
      process.stderr.write(
        `\nlooplm: ${sig} received: finishing the current step and saving a checkpoint (again to stop at once)\n`,
      );
      ac.abort();
    };
    process.on(sig, h);
    return [sig, h] as const;
  });
  try {
    return await work(ac.signal);
  } catch (e) {
    if (e instanceof RunInterrupted)
      throw new CliError(
        `stopped by ${got ?? "a signal"} after step ${e.step}; checkpoint saved in ${e.checkpoint}. Resume with: ${resumeHint}`,
        CODES[got ?? "SIGINT"],
      );
    throw e;
  } finally {
    for (const [sig, h] of handlers) process.off(sig, h);
  }
}
