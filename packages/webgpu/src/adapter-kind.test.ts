import { describe, expect, it } from "vitest";
import { isCpuEmulation } from "./adapter-kind.js";

describe("isCpuEmulation", () => {
  it("tells the CPU emulators from GPUs by the adapter's description", () => {
    // as Dawn names SwiftShader in Node, and as Chromium names it in a page
    expect(
      isCpuEmulation("google swiftshader swiftshader-device-subzero- SwiftShader driver 5.0.0"),
    ).toBe(true);
    expect(isCpuEmulation("google swiftshader")).toBe(true);
    expect(isCpuEmulation("mesa llvmpipe (LLVM 15.0.6, 256 bits)")).toBe(true);
    expect(isCpuEmulation("nvidia hopper NVIDIA H200 NVIDIA: 550.54.15")).toBe(false);
    expect(isCpuEmulation("apple metal-3 Apple M2")).toBe(false);
  });
});
