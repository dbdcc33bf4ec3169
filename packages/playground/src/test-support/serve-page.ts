/**
 * Test support: build the page with Vite into a temporary folder and serve it (with the
 * cross-origin isolation headers of vite.config.ts) on a free local port.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type PreviewServer, preview } from "vite";

export const playgroundRoot = fileURLToPath(new URL("../..", import.meta.url));

export interface ServedPage {
  url: string;
  /** The built page. */
  outDir: string;
  close(): Promise<void>;
}

export async function buildAndServe(): Promise<ServedPage> {
  const outDir = mkdtempSync(join(tmpdir(), "looplm-playground-"));
  await build({ root: playgroundRoot, logLevel: "error", build: { outDir, emptyOutDir: true } });
  const server: PreviewServer = await preview({
    root: playgroundRoot,
    logLevel: "warn",
    build: { outDir },
    preview: { host: "127.0.0.1", port: 0, strictPort: false, open: false },
  });
  const url = server.resolvedUrls?.local[0];
  if (url === undefined) throw new Error("vite preview did not report a local URL");
  return { url, outDir, close: () => server.close() };
}
