/*
 * Reading a small record the user may have put in place (a study's seed record) by the one input
 * rule (@loop/tensor/node's input-file.ts): only a regular file is opened, never blocking, and
 * only up to a size a record can have. `fileKind` names what an output's name is taken by.
 */
import type { Stats } from "node:fs";
import { inputFileExists, readInputText } from "@loop/tensor/node";
import { asCliError } from "./errors.js";

/** What a non-regular file is, in words ("a FIFO"). */
export function fileKind(st: Stats): string {
  if (st.isDirectory()) return "a folder";
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  return "not a regular file";
}

/**
 * The UTF-8 text of the regular file `path`, or null when nothing is there. `what` names the
 * file in errors ("a seed record"); a file over `maxBytes`, not regular, a dangling or looping
 * link, or not UTF-8 is refused.
 */
export function readRegularFile(path: string, what: string, maxBytes: number): string | null {
  return asCliError(() => (inputFileExists(path) ? readInputText(path, { maxBytes, what }) : null));
}
