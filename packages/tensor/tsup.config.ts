import { packageBuild } from "../../tools/build/tsup-package.js";

export default packageBuild([
  "src/index.ts",
  "src/internal.ts",
  "src/kernel.ts",
  "src/node/index.ts",
  "src/node/threads-worker.ts",
  "src/web/index.ts",
]);
