import { packageBuild } from "../../tools/build/tsup-package.js";

export default packageBuild(
  ["src/index.ts", "src/internal.ts", "src/kernel.ts", "src/node/index.ts"],
  {
    external: ["webgpu"],
    // The declarations name WebGPU's types (GPUDevice, GPUBuffer): every bundled .d.ts file,
    // chunks included, must pull them in for a consumer whose tsconfig does not list them.
    dts: { banner: '/// <reference types="@webgpu/types" />' },
  },
);
