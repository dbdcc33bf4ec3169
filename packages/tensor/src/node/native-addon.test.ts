import { describe, expect, it } from "vitest";
import { buildNativeAddon } from "./native-addon.js";

const source = new URL("../../native/tensor.c", import.meta.url).pathname;

describe("a machine without a C compiler", () => {
  it("says so in words, naming CC, not as the spawn error", async () => {
    const prev = {
      CC: process.env.CC,
      cache: process.env.LOOPLM_NATIVE_CACHE,
      PATH: process.env.PATH,
    };
    process.env.LOOPLM_NATIVE_CACHE = `/tmp/looplm-native-nocc-${process.pid}`;
    try {
      process.env.CC = "/nonexistent/bin/cc";
      const r = await buildNativeAddon("t", source);
      expect(r).toEqual({
        ok: false,
        error:
          "no C compiler: CC=/nonexistent/bin/cc is not a program on this machine (set CC to gcc or clang)",
      });
      delete process.env.CC;
      process.env.PATH = "/nonexistent/bin";
      expect(await buildNativeAddon("t", source)).toEqual({
        ok: false,
        error:
          'no C compiler: "cc" is not on PATH (install gcc or clang, e.g. apt-get install gcc, or set CC)',
      });
    } finally {
      for (const [k, v] of [
        ["CC", prev.CC],
        ["LOOPLM_NATIVE_CACHE", prev.cache],
        ["PATH", prev.PATH],
      ] as const)
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  });
});
