// parse.ts builds the syntax tree of strict JSON itself (strictJsonTree) and leaves jsonc-parser to text
// with errors: for any strict JSON, the tree must be jsonc-parser's, node for node.
import { type Node, parseTree } from "jsonc-parser";
import { describe, expect, it } from "vitest";
import { strictJsonTree } from "../../src/manifest/parse.js";
import { fixtureManifests, stressManifests } from "../generate/stress-manifests.js";

/** The fields the validators read (they never follow parent links). */
function shape(node: Node): unknown {
  return {
    type: node.type,
    offset: node.offset,
    length: node.length,
    value: node.value,
    children: node.children?.map(shape),
  };
}

const TEXTS: string[] = [
  ...fixtureManifests().map(([, text]) => text),
  ...stressManifests().map(([, text]) => JSON.stringify(JSON.parse(text), null, 2)),
  '{"a":"q\\"uote","b":"back\\\\","c":"\\\\\\"","d":"\\u00e9\\n\\t","e":"é😀","f":""}',
  ' \t\r\n{ "n" : [ -1 , 0.5 , 1e21 , -2.5E-7 , 0 ] , "t" : true , "f" : false , "z" : null , "o" : { } , "l" : [ ] } \n',
  '[1,{"a":[{"b":{"c":[[],[{}]]}}]},"x"]',
  '"just a string"',
  "42",
  '{"__proto__":{"x":1},"a":1,"a":2}',
  JSON.stringify(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i]))).replace(
    '"k39"',
    '"k3"',
  ),
];

describe("strictJsonTree", () => {
  it.each(TEXTS.map((t, i) => [i, t]))("is jsonc-parser's tree (text %i)", (_i, text) => {
    const expected = parseTree(text, [], { disallowComments: true, allowTrailingComma: false });
    const { root, duplicates } = strictJsonTree(text);
    expect(shape(root)).toEqual(shape(expected!));
    expect(duplicates).toBe(text.includes('"a":1,"a":2') || text.includes('"k3":39'));
  });
});
