/*
 * JSON as Python's json module reads and writes it: `json.dumps` spells non-finite floats as the
 * bare words `Infinity`, `-Infinity` and `NaN`, which JSON.parse rejects. transformers writes
 * every config.json that way (Mamba-2's default time_step_limit is [0.0, Infinity]), so model
 * folders are read with a parser that takes those words (JSON5, a superset of JSON) and written
 * with them where a value is not finite.
 */
import JSON5 from "json5";

/** Parse JSON text that may hold Python's bare `Infinity`, `-Infinity` and `NaN`. */
export function parsePythonJson(text: string): unknown {
  return JSON5.parse(text);
}

/** Stand-ins for the non-finite numbers while JSON.stringify runs (no JSON string is NUL-led). */
const MARK = "\u0000looplm-non-finite:";

/**
 * `value` as indented JSON (2 spaces), non-finite numbers written as Python's json module writes
 * them (`Infinity`, `-Infinity`, `NaN`) instead of JSON.stringify's `null`.
 */
export function pythonJson(value: unknown): string {
  let marked = false;
  const text = JSON.stringify(
    value,
    (k, v) => {
      if (k.startsWith(MARK) || (typeof v === "string" && v.startsWith(MARK)))
        throw new Error(
          `pythonJson: a key or string starts with the reserved ${JSON.stringify(MARK)}`,
        );
      if (typeof v !== "number" || Number.isFinite(v)) return v;
      marked = true;
      return `${MARK}${v}`;
    },
    2,
  );
  if (!marked) return text;
  // JSON.stringify escapes the NUL as \u0000 inside the quoted stand-in
  return text.replace(/"\\u0000looplm-non-finite:(-?Infinity|NaN)"/g, "$1");
}
