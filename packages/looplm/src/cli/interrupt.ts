/*
 * SIGINT/SIGTERM during training: the first signal asks the training loop (through an
 * AbortSignal) to finish its current step, checkpoint and stop; the command then prints how to
 * resume and exits 130 (SIGINT) or 143 (SIGTERM). A second signal exits at once — every file is
 * written atomically, so even that leaves a resumable folder. Copies of the first signal that
 * arrive together (Ctrl-C reaches the whole process group, and `pnpm looplm`'s tsx relays it
 * once more) are not a second signal.
 *
 * A step that runs long must not hold the stop back. JavaScript handlers only run between
 * pieces of synchronous work, so during a step that is new or took over LONG_SPAN_MS last time
 * the handlers are taken off: the signal's default action then ends the process at once,
 * dropping the unfinished step and keeping the last checkpoint (every file is written
 * atomically; `--resume` continues from it). A span that yields (a GPU step, an evaluation,
 * which yields between its batches and stops there) hears the signal and gets GRACE_MS to end
 * before the process exits without it; an evaluation stopped so prints the stop and resume
 * lines like a step, its step's checkpoint written before it began.
 */
import { RunInterrupted } from "@loop/train/node";
import { CliError } from "./errors.js";
import { signalTaken } from "./launcher-watch.js";

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

let running = 0;
/** A span of computation slower than this last time runs without the signal handlers. */
const LONG_SPAN_MS = 1000;
/** How long a span that hears the signal (it yields) may go on before the process exits. */
const GRACE_MS = 5000;
/** How long the last span of each kind took. */
const lastSpanMs = new Map<string, number>();
let spans: ((kind: string) => () => void) | null = null;

/**
 * While withInterrupts runs: bracket a span of synchronous computation of `kind` ("step",
 * "eval") — call it before and the function it returns after — so that a signal stops even a
 * long one within seconds. Undefined outside withInterrupts.
 */
export function interruptibleSpans(): ((kind: string) => () => void) | undefined {
  return spans ?? undefined;
}

/** Whether work under withInterrupts (training that checkpoints, or watching a queue) runs now. */
export function interruptibleWorkRunning(): boolean {
  return running > 0;
}
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
  // a span of computation is running; the grace timer of a span that heard the signal
  let inSpan = false;
  let grace: NodeJS.Timeout | null = null;
  const onSignal = (sig: Sig) => {
    if (got) {
      if (performance.now() - at > RELAY_MS) process.exit(CODES[sig]);
      return;
    }
    got = sig;
    at = performance.now();
    signalTaken();
    process.stderr.write(
      opts.watching
        ? `\nlooplm: ${sig} received: no longer watching the queue; its jobs stay there for the workers\n`
        : `\nlooplm: ${sig} received: finishing the current step and saving a checkpoint (again to stop at once)\n`,
    );
    ac.abort();
    if (inSpan)
      grace = setTimeout(() => {
        process.stderr.write(
          `looplm: the step in progress did not end within ${GRACE_MS / 1000} s of ${sig}: stopped without it, keeping the last checkpoint. Resume with: ${resumeHint}\n`,
        );
        process.exit(CODES[sig]);
      }, GRACE_MS);
  };
  const handlers = (Object.keys(CODES) as Sig[]).map((sig) => {
    const h = () => onSignal(sig);
    process.on(sig, h);
    return [sig, h] as const;
  });
  let listening = true;
  const listen = (on: boolean) => {
    if (on === listening) return;
    listening = on;
    for (const [sig, h] of handlers) on ? process.on(sig, h) : process.off(sig, h);
  };
  const previousSpans = spans;
  spans = (kind) => {
    const t0 = performance.now();
    const last = lastSpanMs.get(kind);
    inSpan = true;
    // (after the first signal the handlers stay: a second one must still exit at once; and
    // where something else also listens, taking ours off would not restore the default action)
    const alone = handlers.every(([sig]) => process.listenerCount(sig) === 1);
    // (an evaluation yields between its batches and stops there on the signal: it keeps them)
    if (!got && alone && kind !== "eval" && (last === undefined || last > LONG_SPAN_MS))
      listen(false);
    return () => {
      inSpan = false;
      lastSpanMs.set(kind, performance.now() - t0);
      listen(true);
      if (grace) clearTimeout(grace);
      grace = null;
    };
  };
  running++;
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
    running--;
    spans = previousSpans;
    if (grace) clearTimeout(grace);
    listen(false);
  }
}
