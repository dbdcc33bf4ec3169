/**
 * Test support: Debian's headless Chromium driven by playwright-core (no browser download). The
 * flags keep it from reaching the network on its own and give it a fresh profile.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Flags that give headless Chromium on Linux a WebGPU adapter (SwiftShader without a GPU). */
export const WEBGPU_FLAGS = ["--enable-unsafe-webgpu"];

export async function launchChromium(opts: { webgpu?: boolean } = {}): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...(opts.webgpu ? WEBGPU_FLAGS : []),
    ],
  });
}
