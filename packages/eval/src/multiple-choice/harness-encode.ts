/*
 * Log-likelihood requests tokenised the lm-evaluation-harness way (HFLM `_encode_pair` and
 * `_loglikelihood_tokens`):
 *  1. continuation = delimiter + choice (delimiter " " by default: `target_delimiter`).
 *  2. Trailing whitespace of the context moves to the front of the continuation.
 *  3. whole = encode(context + continuation); ctx = encode(context);
 *     continuation ids = whole[len(ctx):]  (so a merge across the boundary is kept whole).
 *     An empty context is replaced by the end-of-text id (error when the tokenizer has none).
 *  4. Model input = (ctx + cont)[-(maxLength+1):][:-1]; the last len(cont) positions predict the
 *     continuation ids; loglik = Σ log p(cont_j | everything before it).
 * No BOS token is prepended (the harness default for causal LMs).
 */
import type { McItem } from "./mc-items.js";

/** Any tokenizer: text → ids. `eosId` stands in for an empty context. */
export interface McTokenizer {
  encode(text: string): ArrayLike<number>;
  readonly eosId?: number | null;
}

/**
 * One log-likelihood request: the model input and the continuation ids it must predict at its last
 * positions.
 */
export interface LoglikRequest {
  /** Model input: context ids + continuation ids minus the last one, left-truncated. */
  input: Int32Array;
  /** Continuation ids; the last `continuation.length` input positions predict them. */
  continuation: Int32Array;
}

/** A context and a continuation as token ids, split the way lm-evaluation-harness splits them. */
export interface EncodedPair {
  context: number[];
  continuation: number[];
}

/**
 * Encode `context` + `continuation` as the harness does: trailing spaces of the context move to the
 * continuation; an empty context becomes the end-of-text id.
 */
export function encodePair(tok: McTokenizer, context: string, continuation: string): EncodedPair {
  if (context === "") {
    if (tok.eosId === undefined || tok.eosId === null)
      throw new Error("encodePair: empty context needs a tokenizer with an end-of-text id (eosId)");
    return { context: [tok.eosId], continuation: Array.from(tok.encode(continuation)) };
  }
  const trimmed = context.replace(/\s+$/u, "");
  const nSpaces = context.length - trimmed.length;
  if (nSpaces > 0) {
    continuation = context.slice(trimmed.length) + continuation;
    context = trimmed;
  }
  const whole = Array.from(tok.encode(context + continuation));
  const ctx = Array.from(tok.encode(context));
  return { context: ctx, continuation: whole.slice(ctx.length) };
}

/** How requests are made: the delimiter between context and choice, and the longest model input. */
export interface RequestOptions {
  /** Put between context and choice (default " "). */
  delimiter?: string;
  /** Longest model input; longer inputs lose tokens on the left (default: no limit). */
  maxLength?: number;
}

/**
 * The request for one encoded pair: context + continuation minus its last id, left-truncated to
 * `maxLength`.
 */
export function makeRequest(
  pair: EncodedPair,
  maxLength = Number.POSITIVE_INFINITY,
): LoglikRequest {
  if (pair.continuation.length === 0)
    throw new Error("makeRequest: the continuation encodes to no tokens");
  if (pair.context.length === 0)
    throw new Error("makeRequest: the context encodes to no tokens (nothing to condition on)");
  if (pair.continuation.length > maxLength)
    throw new Error(
      `makeRequest: continuation has ${pair.continuation.length} tokens, more than maxLength ${maxLength}`,
    );
  const all = [...pair.context, ...pair.continuation];
  const input = all.slice(Math.max(0, all.length - (maxLength + 1)), all.length - 1);
  return { input: Int32Array.from(input), continuation: Int32Array.from(pair.continuation) };
}

/** One request per (item, choice), item-major. */
export function mcRequests(
  items: readonly McItem[],
  tok: McTokenizer,
  opts: RequestOptions = {},
): LoglikRequest[] {
  const delim = opts.delimiter ?? " ";
  const out: LoglikRequest[] = [];
  items.forEach((it, i) => {
    for (const choice of it.choices) {
      try {
        out.push(makeRequest(encodePair(tok, it.context, delim + choice), opts.maxLength));
      } catch (e) {
        throw new Error(`item ${i}: ${(e as Error).message}`);
      }
    }
  });
  return out;
}
