import { describe, expect, it } from "vitest";
import { cudaBackend } from "./backend-ops.js";
import { recordingDevice } from "./recording-device.js";

describe("CudaContext launches", () => {
  it("refuses a launch that asks more shared memory than the GPU allows, naming both", () => {
    const { ops } = cudaBackend({ ...recordingDevice(), maxSharedBytes: 99 * 1024 });
    const t = (shape: number[]) =>
      ops.upload(new Float32Array(shape.reduce((a, b) => a * b, 1)), shape);
    // the scan keeps its [N, P] state in shared memory: N 256 × P 128 floats do not fit 99 KiB
    const [B, T, H, P, G, N] = [1, 4, 2, 128, 1, 256];
    expect(() =>
      ops.ssdScanChunked(
        t([B, T, H, P]),
        t([B, T, H]),
        t([H]),
        t([B, T, G, N]),
        t([B, T, G, N]),
        {},
      ),
    ).toThrow(
      /^cuda: ssd_fwd needs 133120 bytes of shared memory per block, the GPU allows 101376$/,
    );
    // a state that fits runs
    expect(() =>
      ops.ssdScanChunked(
        t([B, T, H, 64]),
        t([B, T, H]),
        t([H]),
        t([B, T, G, 128]),
        t([B, T, G, 128]),
        {},
      ),
    ).not.toThrow();
  });
});
