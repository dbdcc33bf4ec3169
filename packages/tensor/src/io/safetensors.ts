/*
 * safetensors encode/decode (docs/formats.md "Checkpoint"): 8-byte little-endian header length N,
 * N bytes of JSON `{name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__"?: {..}}`,
 * then the raw little-endian data. Writes F32; reads F32, F16 and BF16 (widened to float32).
 * Every malformed input raises an error that says what is wrong, including data bytes that no
 * tensor names (a hole, or bytes after the last tensor). Pure bytes: no file system.
 */
import { allocF32, sizeOf } from "../tensor.js";

/** A float32 array with its shape, as stored in a safetensors file. */
export interface NamedArray {
  data: Float32Array;
  shape: number[];
}

/** A decoded safetensors file: its tensors by name and its string metadata. */
export interface SafetensorsFile {
  tensors: Map<string, NamedArray>;
  metadata: Record<string, string>;
}

const BYTES: Record<string, number> = { F32: 4, F16: 2, BF16: 2 };

function f16ToF32(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m === 0 ? s * Number.POSITIVE_INFINITY : Number.NaN;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/** Parse a safetensors buffer. `what` names the source in error messages. */
export function decodeSafetensors(bytes: Uint8Array, what = "safetensors"): SafetensorsFile {
  if (bytes.length < 8)
    throw new Error(
      `${what}: file is ${bytes.length} bytes, too short for the 8-byte header length`,
    );
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const hlen = Number(view.getBigUint64(0, true));
  if (hlen > bytes.length - 8) {
    throw new Error(
      `${what}: header length ${hlen} exceeds the file (${bytes.length - 8} bytes after the length field); truncated or corrupt`,
    );
  }
  let header: unknown;
  try {
    header = JSON.parse(
      new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(8, 8 + hlen)),
    );
  } catch (e) {
    throw new Error(`${what}: header is not valid JSON (${(e as Error).message})`);
  }
  if (header === null || typeof header !== "object" || Array.isArray(header)) {
    throw new Error(`${what}: header must be a JSON object`);
  }
  const dataStart = 8 + hlen;
  const dataLen = bytes.length - dataStart;
  const tensors = new Map<string, NamedArray>();
  let metadata: Record<string, string> = {};
  const ranges: [number, number, string][] = [];
  for (const [name, raw] of Object.entries(header as Record<string, unknown>)) {
    if (name === "__metadata__") {
      if (raw === null || typeof raw !== "object")
        throw new Error(`${what}: __metadata__ must be an object of strings`);
      metadata = raw as Record<string, string>;
      continue;
    }
    const info = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (!info || typeof info !== "object")
      throw new Error(`${what}: entry "${name}" is not an object`);
    const dtype = info.dtype;
    if (typeof dtype !== "string" || !(dtype in BYTES)) {
      throw new Error(
        `${what}: tensor "${name}" has unsupported dtype ${JSON.stringify(dtype)} (supported: F32, F16, BF16)`,
      );
    }
    const shape = info.shape;
    if (!Array.isArray(shape) || shape.some((d) => !Number.isInteger(d) || d < 0)) {
      throw new Error(`${what}: tensor "${name}" has invalid shape ${JSON.stringify(shape)}`);
    }
    const off = info.data_offsets;
    if (
      !Array.isArray(off) ||
      off.length !== 2 ||
      off.some((d) => !Number.isInteger(d) || d < 0) ||
      off[0] > off[1]
    ) {
      throw new Error(`${what}: tensor "${name}" has invalid data_offsets ${JSON.stringify(off)}`);
    }
    const [b, e] = off as [number, number];
    const n = sizeOf(shape as number[]);
    const width = BYTES[dtype]!;
    if (e - b !== n * width) {
      throw new Error(
        `${what}: tensor "${name}" spans ${e - b} bytes but ${dtype}${JSON.stringify(shape)} needs ${n * width}`,
      );
    }
    if (e > dataLen) {
      throw new Error(
        `${what}: tensor "${name}" data_offsets [${b}, ${e}] run past the end of the data (${dataLen} bytes); truncated file`,
      );
    }
    ranges.push([b, e, name]);
    const data = allocF32(n);
    const base = dataStart + b;
    if (dtype === "F32") {
      for (let i = 0; i < n; i++) data[i] = view.getFloat32(base + 4 * i, true);
    } else if (dtype === "F16") {
      for (let i = 0; i < n; i++) data[i] = f16ToF32(view.getUint16(base + 2 * i, true));
    } else {
      const tmp = new DataView(new ArrayBuffer(4));
      for (let i = 0; i < n; i++) {
        tmp.setUint32(0, view.getUint16(base + 2 * i, true) << 16, true);
        data[i] = tmp.getFloat32(0, true);
      }
    }
    tensors.set(name, { data, shape: shape as number[] });
  }
  ranges.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let end = 0;
  for (let i = 0; i < ranges.length; i++) {
    const cur = ranges[i]!;
    const prev = ranges[i - 1];
    if (prev && cur[0] < prev[1])
      throw new Error(
        `${what}: tensors "${prev[2]}" and "${cur[2]}" have overlapping data_offsets`,
      );
    // The format indexes every data byte (the reference reader refuses holes too): bytes no
    // tensor names are damage or something appended, never weights.
    if (cur[0] > end)
      throw new Error(
        `${what}: ${cur[0] - end} bytes before tensor "${cur[2]}" belong to no tensor; corrupt file`,
      );
    end = Math.max(end, cur[1]);
  }
  if (dataLen > end)
    throw new Error(
      `${what}: ${dataLen - end} bytes after the last tensor's end (byte ${dataStart + end} of ${bytes.length}); the file is damaged or has something appended`,
    );
  return { tensors, metadata };
}

/** Serialise float32 tensors (sorted by name, 8-byte aligned header). */
export function encodeSafetensors(
  tensors: Map<string, NamedArray> | Record<string, NamedArray>,
  metadata?: Record<string, string>,
): Uint8Array {
  const entries = (tensors instanceof Map ? [...tensors.entries()] : Object.entries(tensors)).sort(
    (a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0),
  );
  const header: Record<string, unknown> = {};
  if (metadata && Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let off = 0;
  for (const [name, t] of entries) {
    if (t.data.length !== sizeOf(t.shape)) {
      throw new Error(
        `encodeSafetensors: "${name}" has ${t.data.length} values for shape ${JSON.stringify(t.shape)}`,
      );
    }
    header[name] = { dtype: "F32", shape: t.shape, data_offsets: [off, off + 4 * t.data.length] };
    off += 4 * t.data.length;
  }
  let json = JSON.stringify(header);
  while ((8 + new TextEncoder().encode(json).length) % 8 !== 0) json += " ";
  const hbytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + hbytes.length + off);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(hbytes.length), true);
  out.set(hbytes, 8);
  let p = 8 + hbytes.length;
  for (const [, t] of entries) {
    for (let i = 0; i < t.data.length; i++) view.setFloat32(p + 4 * i, t.data[i]!, true);
    p += 4 * t.data.length;
  }
  return out;
}
