import { describe, expect, it } from "vitest";
import { encodePair, makeRequest, mcRequests } from "./harness-encode.js";
import { pieceTokenizer } from "./test-tokenizers.js";

// GPT-2-like pieces: a space belongs to the word after it.
const tok = pieceTokenizer(["Answer:", " yes", " no", " ", "Q", "x", "a", "b", "ab", "<eos>"], 9);

describe("encodePair (lm-evaluation-harness _encode_pair)", () => {
  it("continuation ids are encode(context + continuation) after encode(context)", () => {
    expect(encodePair(tok, "Answer:", " yes")).toEqual({ context: [0], continuation: [1] });
  });

  it("moves the context's trailing whitespace to the continuation", () => {
    // Without the move, encode("Answer: ") = [Answer:, " "] and the continuation would be empty.
    expect(encodePair(tok, "Answer: ", "yes")).toEqual({ context: [0], continuation: [1] });
  });

  it("keeps a token that merges across the boundary in the context", () => {
    // encode("xab") = [x, ab]; encode("xa") = [x, a]: the continuation is whole[2:] = []
    expect(encodePair(tok, "xa", "b")).toEqual({ context: [5, 6], continuation: [] });
    expect(() =>
      mcRequests([{ context: "xa", choices: ["b", "a"], label: 0 }], tok, { delimiter: "" }),
    ).toThrow(/item 0: makeRequest: the continuation encodes to no tokens/);
  });

  it("an empty context becomes the end-of-text id", () => {
    expect(encodePair(tok, "", " no")).toEqual({ context: [9], continuation: [2] });
    const noEos = pieceTokenizer(["a"]);
    expect(() => encodePair(noEos, "", "a")).toThrow(/empty context needs .*eosId/);
  });
});

describe("makeRequest", () => {
  it("input = (context + continuation)[-(maxLength+1):][:-1]", () => {
    const pair = { context: [1, 2, 3, 4], continuation: [5, 6] };
    expect(Array.from(makeRequest(pair).input)).toEqual([1, 2, 3, 4, 5]);
    expect(Array.from(makeRequest(pair, 3).input)).toEqual([3, 4, 5]);
    expect(Array.from(makeRequest(pair, 3).continuation)).toEqual([5, 6]);
    expect(() => makeRequest(pair, 1)).toThrow(/continuation has 2 tokens, more than maxLength 1/);
  });
});

describe("mcRequests", () => {
  it("one request per (item, choice), item-major, with the ' ' delimiter", () => {
    const reqs = mcRequests(
      [
        { context: "Answer:", choices: ["yes", "no"], label: 0 },
        { context: "Q", choices: ["no", "yes"], label: 1 },
      ],
      tok,
    );
    expect(reqs.map((r) => [Array.from(r.input), Array.from(r.continuation)])).toEqual([
      [[0], [1]],
      [[0], [2]],
      [[4], [2]],
      [[4], [1]],
    ]);
  });
});
