/** Run docs/cli.md's recipe of the repository at argv[2]; print its problems as JSON (recipe.ts). */
import { checkRecipe } from "./recipe.js";

process.stdout.write(JSON.stringify(checkRecipe(process.argv[2]!)));
