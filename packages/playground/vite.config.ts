import { defineConfig } from "vite";

// Cross-origin isolation gives the page SharedArrayBuffer, which the thread pool needs.
const isolation = {
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Embedder-Policy": "require-corp",
};

// The workspace packages are read from source (their "@loop/source" export condition), so the
// page needs no package build first.
const conditions = ["@loop/source", "module", "browser", "development|production"];

export default defineConfig({
  resolve: { conditions },
  worker: { format: "es" },
  server: { headers: isolation },
  preview: { headers: isolation },
  build: { target: "es2022", chunkSizeWarningLimit: 2048 },
});
