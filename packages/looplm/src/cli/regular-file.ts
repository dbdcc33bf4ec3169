/*
 * Reading a small record the user may have put in place (a study's seed record) by the one input
 * rule (@loop/tensor/node's input-file.ts): only a regular file is opened, never blocking, and
 * only up to a size a record can have.
 */
import { inputFileExists, readInputText } from "@loop/tensor/node";
import { asCliError } from "./errors.js";

/**
 * The UTF-8 text of the regular file `path`, or null when nothing is there. `what` names the
 * file in errors ("a seed record"); a file over `maxBytes`, not regular, a dangling or looping
 * link, or not UTF-8 is refused.
 */
export function readRegularFile(path: string, what: string, maxBytes: number): string | null {
  return asCliError(() => (inputFileExists(path) ? readInputText(path, { maxBytes, what }) : null));
}
