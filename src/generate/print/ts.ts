/**
 * The text of type-text.ts (json-schema-to-typescript's unformatted interfaces), laid out as prettier lays
 * it out: it is parsed into the few TypeScript type forms it uses (keywords, literals, unions, arrays,
 * tuples with a rest element, type literals with JSDoc comments, index signatures), and each is turned into
 * the document prettier's TypeScript printer builds (prettier/src/language-js/print: union-type.js,
 * array.js, class-body.js, index-signature.js, typescript.js; comments from main/comments/print.js).
 */
import {
  type Doc,
  comment,
  group,
  hardline,
  hardlineKeepingSpaces,
  ifBreak,
  indent,
  join,
  line,
  literalline,
  printDoc,
  softline,
  textWidth,
  Unsupported,
} from "./doc.js";
import { numberLiteral, stringLiteral } from "./js.js";

type TypeNode =
  | { kind: "keyword"; text: string }
  | { kind: "string"; value: string }
  | { kind: "number"; raw: string }
  | { kind: "union"; types: TypeNode[] }
  | { kind: "array"; element: TypeNode }
  | { kind: "tuple"; elements: TypeNode[] }
  | { kind: "rest"; type: TypeNode }
  | { kind: "literal-type"; members: Member[] };

interface Member {
  /** The raw `/** ... *\/` comment before the member, if any. */
  comment?: string;
  /** Property name, or undefined for the index signature `[k: string]`. */
  key?: string;
  optional: boolean;
  type: TypeNode;
}

class Parser {
  pos = 0;
  constructor(readonly text: string) {}

  fail(what: string): never {
    throw new Unsupported(
      `cannot read ${what} at ${this.pos} of ${JSON.stringify(this.text.slice(this.pos, this.pos + 30))}`,
    );
  }

  spaces(): void {
    while (this.text[this.pos] === " ") this.pos++;
  }

  whitespace(): void {
    while (/\s/.test(this.text[this.pos] ?? "")) this.pos++;
  }

  eat(token: string): boolean {
    if (this.text.startsWith(token, this.pos)) {
      this.pos += token.length;
      return true;
    }
    return false;
  }

  expect(token: string): void {
    if (!this.eat(token)) this.fail(`"${token}"`);
  }

  type(): TypeNode {
    this.spaces();
    const types = [this.postfix()];
    for (;;) {
      this.spaces();
      if (!this.eat("|")) break;
      this.spaces();
      types.push(this.postfix());
    }
    return types.length === 1 ? types[0]! : { kind: "union", types };
  }

  postfix(): TypeNode {
    let node = this.primary();
    while (this.eat("[]")) node = { kind: "array", element: node };
    return node;
  }

  primary(): TypeNode {
    const c = this.text[this.pos];
    if (c === "(") {
      this.pos++;
      const inner = this.type();
      this.spaces();
      this.expect(")");
      return inner;
    }
    if (c === "[") return this.tuple();
    if (c === "{") return this.literalType();
    if (c === '"') {
      const match = /^"(?:[^"\\]|\\.)*"/.exec(this.text.slice(this.pos));
      if (!match) this.fail("string");
      this.pos += match[0].length;
      return { kind: "string", value: JSON.parse(match[0]) as string };
    }
    const number = /^-?\d+(?:\.\d+)?(?:e[+-]?\d+)?/i.exec(this.text.slice(this.pos));
    if (number) {
      this.pos += number[0].length;
      return { kind: "number", raw: number[0] };
    }
    const word = /^[a-z]+/.exec(this.text.slice(this.pos));
    if (word) {
      this.pos += word[0].length;
      return { kind: "keyword", text: word[0] };
    }
    return this.fail("type");
  }

  /** `[A, ...B[]]`: a tuple, its elements and a rest element. */
  tuple(): TypeNode {
    this.pos++;
    const elements: TypeNode[] = [];
    this.spaces();
    while (!this.eat("]")) {
      if (elements.length > 0) {
        this.expect(",");
        this.spaces();
      }
      if (this.eat("...")) elements.push({ kind: "rest", type: this.type() });
      else elements.push(this.type());
      this.spaces();
    }
    return { kind: "tuple", elements };
  }

  /** `{ key?: T; [k: string]: U }`: an object literal type, its members with their doc comments. */
  literalType(): TypeNode {
    this.pos++;
    const members: Member[] = [];
    for (;;) {
      this.whitespace();
      if (this.eat("}")) break;
      let raw: string | undefined;
      if (this.text.startsWith("/*", this.pos)) {
        const end = this.text.indexOf("*/", this.pos + 2);
        if (end < 0) this.fail("comment");
        raw = this.text.slice(this.pos, end + 2);
        this.pos = end + 2;
        this.whitespace();
      }
      let key: string | undefined;
      if (this.eat("[k: string]")) key = undefined;
      else {
        const match = /^[A-Za-z_$][\w$]*/.exec(this.text.slice(this.pos));
        if (!match) this.fail("property name");
        key = match[0];
        this.pos += key.length;
      }
      const optional = this.eat("?");
      this.expect(": ");
      members.push({ comment: raw, key, optional, type: this.type() });
    }
    return { kind: "literal-type", members };
  }
}

/** Where a type sits: it decides a union's parentheses and indentation (union-type.js). */
type Place = "annotation" | "array" | "rest" | "tuple-single" | "tuple-many";

function typeDoc(node: TypeNode, place: Place): Doc {
  switch (node.kind) {
    case "keyword":
      return node.text;
    case "string":
      return stringLiteral(node.value);
    case "number":
      return node.raw.startsWith("-")
        ? ["-", numberLiteral(node.raw.slice(1))]
        : numberLiteral(node.raw);
    case "array":
      return [typeDoc(node.element, "array"), "[]"];
    case "rest":
      return ["...", typeDoc(node.type, "rest")];
    case "tuple": {
      if (node.elements.length === 0) return "[]";
      const place: Place = node.elements.length > 1 ? "tuple-many" : "tuple-single";
      const parts: Doc[] = [];
      node.elements.forEach((element, i) => {
        if (i > 0) parts.push([",", line]);
        parts.push(group(typeDoc(element, place)));
      });
      return group(["[", indent([softline, ...parts, ifBreak(",")]), softline, "]"]);
    }
    case "literal-type": {
      if (node.members.length === 0) return "{}";
      const parts: Doc[] = [];
      node.members.forEach((member, i) => {
        if (i > 0) parts.push(line);
        const last = i === node.members.length - 1;
        parts.push(memberDoc(member, last ? ifBreak(";") : ";"));
      });
      // json-schema-to-typescript writes "{" and a line break, so prettier keeps the object type expanded.
      return group(["{", indent([line, ...parts]), line, "}"], { shouldBreak: true });
    }
    case "union": {
      const printed = group(
        node.types.map((type, i) => [
          i === 0 ? ifBreak("| ") : [line, "| "],
          indent(typeDoc(type, "annotation")),
        ]),
      );
      switch (place) {
        case "array":
        case "rest":
          return ["(", group([indent([softline, printed]), softline]), ")"];
        case "tuple-many":
          return group([indent([ifBreak(["(", softline]), printed]), softline, ifBreak(")")]);
        case "tuple-single":
          return printed;
        case "annotation":
          return group(indent([softline, printed]));
      }
    }
  }
}

function memberDoc(member: Member, semicolon: Doc): Doc {
  const head: Doc =
    member.key === undefined
      ? ["[", group([indent([softline, "k: string"]), softline]), "]"]
      : [member.key, member.optional ? "?" : ""];
  const body: Doc = [group([head, ": ", typeDoc(member.type, "annotation")]), semicolon];
  return member.comment === undefined ? body : [blockCommentDoc(member.comment), hardline, body];
}

/**
 * A block comment as prettier prints it (language-js/print/comment.js): re-indented line by line when every
 * line starts with "*" (JSDoc), trailing spaces dropped except a Markdown line break (two spaces) in a JSDoc;
 * else verbatim. prettier first turns "\r\n" and "\r" into "\n".
 */
export function blockCommentDoc(raw: string): Doc {
  const text = raw.replace(/\r\n?/g, "\n");
  const value = text.slice(2, -2);
  const lines = value.includes("\n") ? `*${value}*`.split("\n").map((l) => l.trimStart()) : [];
  if (lines.length === 0 || !lines.every((l) => l.startsWith("*"))) {
    return join(literalline, text.split("\n").map(comment));
  }
  const isJsdoc = value[0] === "*" && value[1] !== "*";
  const parts: Doc[] = [comment(`/${lines[0]!.trimEnd()}`), hardline];
  for (let i = 1; i < lines.length - 1; i++) {
    const l = lines[i]!;
    const trimmed = l.trimEnd();
    if (isJsdoc && trimmed !== "*" && l.endsWith("  ")) {
      parts.push(comment(` ${trimmed}  `), hardlineKeepingSpaces);
    } else parts.push(comment(` ${trimmed}`), hardline);
  }
  parts.push(comment(` ${lines[lines.length - 1]!}/`));
  return parts;
}

/** A block comment's text at `indentation` (the first line's indentation is the caller's): blockCommentDoc. */
function commentText(raw: string, indentation: number): string {
  const text = raw.replace(/\r\n?/g, "\n");
  const value = text.slice(2, -2);
  const lines = value.includes("\n") ? `*${value}*`.split("\n").map((l) => l.trimStart()) : [];
  if (lines.length === 0 || !lines.every((l) => l.startsWith("*"))) return text;
  const isJsdoc = value[0] === "*" && value[1] !== "*";
  const pad = " ".repeat(indentation);
  let out = `/${lines[0]!.trimEnd()}`;
  for (let i = 1; i < lines.length - 1; i++) {
    const l = lines[i]!;
    const trimmed = l.trimEnd();
    out += `\n${pad} ${trimmed}${isJsdoc && trimmed !== "*" && l.endsWith("  ") ? "  " : ""}`;
  }
  return `${out}\n${pad} ${lines[lines.length - 1]!}/`;
}

function hasTypeLiteral(node: TypeNode): boolean {
  switch (node.kind) {
    case "literal-type":
      return true;
    case "array":
      return hasTypeLiteral(node.element);
    case "rest":
      return hasTypeLiteral(node.type);
    case "union":
      return node.types.some(hasTypeLiteral);
    case "tuple":
      return node.elements.some(hasTypeLiteral);
    default:
      return false;
  }
}

/** A type without type literals on one line: what typeDoc() prints in flat mode. */
function flatType(node: TypeNode, place: Place): string {
  switch (node.kind) {
    case "keyword":
      return node.text;
    case "string": {
      const text = stringLiteral(node.value);
      textWidth(text);
      return text;
    }
    case "number":
      return node.raw.startsWith("-")
        ? `-${numberLiteral(node.raw.slice(1))}`
        : numberLiteral(node.raw);
    case "array":
      return `${flatType(node.element, "array")}[]`;
    case "rest":
      return `...${flatType(node.type, "rest")}`;
    case "tuple": {
      const inner: Place = node.elements.length > 1 ? "tuple-many" : "tuple-single";
      return `[${node.elements.map((e) => flatType(e, inner)).join(", ")}]`;
    }
    case "union": {
      const text = node.types.map((t) => flatType(t, "annotation")).join(" | ");
      return place === "array" || place === "rest" ? `(${text})` : text;
    }
    case "literal-type":
      throw new Error("a type literal never prints flat");
  }
}

/**
 * A member of an interface or of a broken type literal, at column `indentation`: on one line when it fits
 * (and holds no type literal, which json-schema-to-typescript always writes expanded), an expanded type
 * literal member by member, anything else (a long union or tuple) through its document.
 */
function memberText(member: Member, indentation: number): string {
  const pad = " ".repeat(indentation);
  const comment =
    member.comment === undefined ? "" : `${pad}${commentText(member.comment, indentation)}\n`;
  const head =
    member.key === undefined ? "[k: string]: " : `${member.key}${member.optional ? "?" : ""}: `;
  let type = member.type;
  let arrays = 0;
  while (type.kind === "array") {
    type = type.element;
    arrays++;
  }
  if (type.kind === "literal-type") {
    return `${comment}${pad}${head}${typeLiteralText(type, indentation)}${"[]".repeat(arrays)};`;
  }
  if (!hasTypeLiteral(member.type)) {
    const flat = `${head}${flatType(member.type, "annotation")};`;
    if (indentation + flat.length <= 100) return `${comment}${pad}${flat}`;
  }
  return `${comment}${pad}${printDoc(memberDoc({ ...member, comment: undefined }, ";"), 100, indentation)}`;
}

function typeLiteralText(node: { members: Member[] }, indentation: number): string {
  if (node.members.length === 0) return "{}";
  const lines = node.members.map((m) => memberText(m, indentation + 2));
  return `{\n${lines.join("\n")}\n${" ".repeat(indentation)}}`;
}

/** printDoc(interfaceDoc(text)), without building documents for what fits or is always expanded. */
export function printInterface(text: string): string {
  const parser: Parser = new Parser(text);
  let comment = "";
  if (text.startsWith("/*")) {
    const end = text.indexOf("*/");
    comment = `${commentText(text.slice(0, end + 2), 0)}\n`;
    parser.pos = end + 2;
    parser.whitespace();
  }
  const head = /^export interface ([A-Za-z_$][\w$]*) /.exec(text.slice(parser.pos));
  if (!head) parser.fail("interface");
  parser.pos += head[0].length;
  const body = parser.primary();
  if (body.kind !== "literal-type") parser.fail("interface body");
  parser.whitespace();
  if (parser.pos !== text.length) parser.fail("end of text");
  return `${comment}export interface ${head[1]} ${typeLiteralText(body, 0)}`;
}
