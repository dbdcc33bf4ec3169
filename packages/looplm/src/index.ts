export { CliError } from "./cli/errors.js";
export { buildProgram } from "./cli/program.js";
