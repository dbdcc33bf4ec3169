/*
 * A reader that closes the pipe early (`looplm sample mano | head -1`) has taken what it wanted,
 * so every command ends quietly with exit status 0 when stdout goes away, instead of Node's
 * unhandled-EPIPE stack trace. Any other stdout failure is one line and status 1. Work that
 * keeps a run folder (training: `busy()`) is never killed by its printing: it goes on, and the
 * failure only sets the exit status. A failing stderr (`2> /dev/full`) has nowhere to report to
 * and is ignored.
 */
import { once } from "node:events";

let failed = false;

/** Whether stdout failed (other than a reader going away) while work went on regardless. */
export function stdoutFailed(): boolean {
  return failed;
}

/** Install the handlers on stdout and stderr (once, at start). */
export function endQuietlyWhenStdoutCloses(
  stdout: NodeJS.WriteStream = process.stdout,
  exit: (code: number) => void = (code) => process.exit(code),
  busy: () => boolean = () => false,
  stderr: NodeJS.WriteStream = process.stderr,
): void {
  let told = false;
  stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (busy()) {
      if (e.code !== "EPIPE") failed = true;
      if (!told && e.code !== "EPIPE")
        stderr.write(`looplm: cannot write to stdout: ${e.message}; the work goes on\n`);
      told = true;
      return;
    }
    if (e.code === "EPIPE") return exit(0);
    stderr.write(`looplm: cannot write to stdout: ${e.message}\n`);
    exit(1);
  });
  // (without a listener, a failed progress line would be an unhandled 'error' event)
  stderr.on("error", () => {});
}

/**
 * Write to stdout and wait while the pipe is full: a command that prints much (`looplm sample
 * --count 1000000`) then keeps pace with its reader instead of buffering everything, and notices
 * a reader that has gone away.
 */
export async function writeStdout(s: string): Promise<void> {
  if (!process.stdout.write(s)) await once(process.stdout, "drain");
}
