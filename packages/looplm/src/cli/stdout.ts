/*
 * A reader that closes the pipe early (`looplm sample mano | head -1`) has taken what it wanted,
 * so every command ends quietly with exit status 0 when stdout goes away, instead of Node's
 * unhandled-EPIPE stack trace. Any other stdout failure is one line and status 1.
 */
import { once } from "node:events";

export function endQuietlyWhenStdoutCloses(
  stdout: NodeJS.WriteStream = process.stdout,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") return exit(0);
    process.stderr.write(`looplm: cannot write to stdout: ${e.message}\n`);
    exit(1);
  });
}

/**
 * Write to stdout and wait while the pipe is full: a command that prints much (`looplm sample
 * --count 1000000`) then keeps pace with its reader instead of buffering everything, and notices
 * a reader that has gone away.
 */
export async function writeStdout(s: string): Promise<void> {
  if (!process.stdout.write(s)) await once(process.stdout, "drain");
}
