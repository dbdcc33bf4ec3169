import { packageBuild } from "../../tools/build/tsup-package.js";

export default packageBuild(["src/index.ts", "src/cli/main.ts"], {
  dts: { entry: "src/index.ts" },
});
