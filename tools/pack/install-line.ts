// The install command each package README shows: the package and its closure from the folder
// `pnpm pack-all` writes, version-free (`*`: pack-all keeps one version of each in the folder).
import { closure, type WorkspacePackage } from "./workspace.js";

/** `npm install ./packed/<tarball>…` for `name` and every workspace package it needs. */
export function installLine(name: string, pkgs: WorkspacePackage[]): string {
  const files = closure(name, pkgs).map(
    (n) => `./packed/${n.replace(/^@/, "").replace("/", "-")}-*.tgz`,
  );
  return `npm install ${files.join(" ")}`;
}
