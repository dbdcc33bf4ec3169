// `pnpm pack-all [--out <folder>] [--no-build]`: build every publishable package and write its
// tarball into one folder (default `packed/`), from which `npm install ./packed/<file>.tgz …`
// installs any package with its closure (each package README lists it). Progress goes to
// stderr, a line per build started and ended and per tarball; independent packages build at once.
import { join, resolve } from "node:path";
import { packAll } from "./pack-all.js";

const args = process.argv.slice(2);
const at = args.indexOf("--out");
const root = resolve(import.meta.dirname, "..", "..");
const out = resolve(at >= 0 && args[at + 1] ? args[at + 1]! : join(root, "packed"));
const files = await packAll(root, out, args.includes("--no-build") ? "never" : "always", (line) =>
  process.stderr.write(`pack-all: ${line}\n`),
);
for (const [name, file] of files) console.log(`${name.padEnd(18)} ${file}`);
