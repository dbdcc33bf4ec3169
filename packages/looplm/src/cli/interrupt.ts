/*
 * SIGINT/SIGTERM during training: the first signal asks the training loop (through an
 * AbortSignal) to finish its current step, checkpoint and stop; the command then prints how to
 * resume and exits 130 (SIGINT) or 143 (SIGTERM). A second signal exits at once — every file is
 * written atomically, so even that leaves a resumable folder. Copies of the first signal that
 * arrive together (Ctrl-C reaches the whole process group, and `pnpm looplm`'s tsx relays it
 * once more) are not a second signal.
 */
import { RunInterrupted } from "@loop/train/node";
import { CliError } from "./errors.js";

const CODES = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * Work that stopped on the signal without one run of its own to name: child processes (each a
 * `looplm sweep` that checkpointed on the forwarded signal) ended on it.
 */
export class ChildrenInterrupted extends Error {
  override name = "ChildrenInterrupted";
  constructor(readonly stopped: number) {
    super(`${stopped} child process(es) stopped with a checkpoint`);
  }
}
/**
 * A command that only watched work done elsewhere (jobs that queue workers train) stopped
 * watching on the signal; `left` says what goes on without it.
 */
export class WatchInterrupted extends Error {
  override name = "WatchInterrupted";
  constructor(readonly left: string) {
    super(left);
  }
}
type Sig = keyof typeof CODES;
/** Signals closer together than this are one signal delivered twice. */
const RELAY_MS = 1000;

/**
 * Run `work` with the signal handlers installed; `resumeHint` is the command that continues it.
 * A `RunInterrupted` becomes a CliError with the signal's exit status.
 */
export async function withInterrupts<T>(
  resumeHint: string,
  work: (signal: AbortSignal) => Promise<T>,
  /** The work only watches jobs that others train (`sweep --queue`): nothing here checkpoints. */
  opts: { watching?: boolean } = {},
): Promise<T> {
  const ac = new AbortController();
  let got: Sig | null = null;
  let at = 0;
  const onSignal = (sig: Sig) => {
    if (got) {
      if (performance.now() - at > RELAY_MS) process.exit(CODES[sig]);
      return;
    }
    got = sig;
    at = performance.now();
    process.stderr.write(
      opts.watching
        ? `\nlooplm: ${sig} received: no longer watching the queue; its jobs stay there for the workers\n`
        : `\nlooplm: ${sig} received: finishing the current step and saving a checkpoint (again to stop at once)\n`,
    );
    ac.abort();
  };
  const handlers = (Object.keys(CODES) as Sig[]).map((sig) => {
    const h = () => onSignal(sig);
    process.on(sig, h);
    return [sig, h] as const;
  });
  // `pnpm looplm`: pnpm answers SIGTERM by ending its shell, which does not pass the signal on;
  // the training process is then re-parented. Losing the launcher counts as SIGTERM.
  const launcher = process.env.npm_lifecycle_event === "looplm" ? process.ppid : null;
  const watch =
    launcher === null
      ? null
      : setInterval(() => {
          if (process.ppid !== launcher && !got) onSignal("SIGTERM");
        }, 500).unref();
  try {
    return await work(ac.signal);
  } catch (e) {
    // what the interrupted work left, by kind (anything else is not an interruption)
    const left =
      e instanceof RunInterrupted
        ? ` after step ${e.step}; checkpoint saved in ${e.checkpoint}`
        : e instanceof ChildrenInterrupted
          ? `: ${e.stopped} sweep(s) in training saved a checkpoint`
          : e instanceof WatchInterrupted
            ? `: ${e.left}`
            : null;
    if (left === null) throw e;
    throw new CliError(
      `stopped by ${got ?? "a signal"}${left}. Resume with: ${resumeHint}`,
      CODES[got ?? "SIGINT"],
    );
  } finally {
    if (watch) clearInterval(watch);
    for (const [sig, h] of handlers) process.off(sig, h);
  }
}
