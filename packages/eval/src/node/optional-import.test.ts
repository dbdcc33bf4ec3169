import { describe, expect, it } from "vitest";
import { importOptional } from "./optional-import.js";

describe("importOptional", () => {
  it("returns the module when it is installed", async () => {
    const vega = await importOptional("vega", () => import("vega"));
    expect(typeof vega.View).toBe("function");
  });

  it("names the package to install when it is missing", async () => {
    const missing = "@loop/no-such-package";
    await expect(importOptional("vega", () => import(/* @vite-ignore */ missing))).rejects.toThrow(
      /^rendering charts needs the optional package "vega": install it with npm install vega vega-lite$/,
    );
  });

  it("passes other failures through unchanged", async () => {
    const boom = new Error("boom");
    await expect(importOptional("vega", () => Promise.reject(boom))).rejects.toBe(boom);
  });
});
