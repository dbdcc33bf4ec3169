/*
 * Text given as a command-line argument (`--text`, `--prompt`). Node decodes the arguments as
 * UTF-8 before looplm sees them, turning every byte that is not UTF-8 into U+FFFD: the bytes
 * themselves are gone by then, and encoding the text would silently give the ids of "�" (or
 * <unk>). Such an argument is refused, as a file that is not UTF-8 is.
 */
import { CliError } from "./errors.js";

/** `text` (the argument of `flag`), refused when it holds U+FFFD. */
export function argumentText(flag: string, text: string): string {
  const at = text.indexOf("\uFFFD");
  if (at >= 0)
    throw new CliError(
      `${flag} holds U+FFFD, the mark of bytes that are not UTF-8 (position ${at}): pass the text as UTF-8 (convert it first, e.g. with iconv -f latin1 -t utf-8)`,
    );
  return text;
}
