/**
 * WebGPU's numeric flags, spelt out: Node's Dawn binding does not install the `GPUBufferUsage` /
 * `GPUMapMode` globals unless asked to, and the values are fixed by the specification.
 */
export const BufferUsage = {
  MAP_READ: 0x0001,
  COPY_SRC: 0x0004,
  COPY_DST: 0x0008,
  UNIFORM: 0x0040,
  STORAGE: 0x0080,
} as const;

/** GPUShaderStage.COMPUTE. */
export const ShaderStage = { COMPUTE: 0x4 } as const;

export const MapMode = { READ: 0x0001 } as const;
