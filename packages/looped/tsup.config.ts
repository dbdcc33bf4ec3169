import { packageBuild } from "../../tools/build/tsup-package.js";

export default packageBuild(["src/index.ts", "src/internal.ts", "src/node/index.ts"]);
