/* One-line notices of the command line on standard error, `looplm: ` first (as its errors). */

/** Print `line` as a notice: `looplm: <line>` on standard error. */
export function cliNote(line: string): void {
  process.stderr.write(`looplm: ${line}\n`);
}
