/*
 * `--precision`: one flag for every command that runs a model (train, eval, generate, forward).
 * It takes any of @loop/tensor's PRECISIONS; the started backend refuses by name one it does not
 * offer (`ComputeBackend.opsAt`, from its capabilities). Absent: fp32.
 */
import { PRECISIONS, type Precision } from "@loop/tensor";
import { Option } from "commander";
import { choiceOption } from "../errors.js";

/** `v` as a precision, or a one-line error listing the choices. */
export const parsePrecision = choiceOption<Precision>("--precision", PRECISIONS);

/** What --help says of it. */
export const PRECISION_HELP =
  "matrix products: fp32 (every backend), tf32 or bf16 (tensor cores, fp32 accumulation; --backend cuda), mixed (f16 operands, f32 accumulation and weights, loss scaling in training; --backend webgpu) (default: fp32)";

/** The --precision option (no default value: an fp32 run records no precision). */
export function precisionOption(): Option {
  return new Option("--precision <p>", PRECISION_HELP).argParser(parsePrecision);
}
