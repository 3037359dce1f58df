import type { CapabilityModel } from "../manifest/model.js";
import {
  type Doc,
  comment,
  conditionalGroup,
  group,
  hardline,
  ifBreak,
  indent,
  line,
  printDoc,
  softline,
} from "./print/doc.js";
import { breakAfterOperator, importDoc, stringLiteral, valueDoc } from "./print/js.js";
import { blockCommentDoc } from "./print/ts.js";
import { handlerFunctionName } from "./names.js";
import { checkedSample } from "./sample-values.js";
import type { SourceFile } from "./source-file.js";

/** The handler file of a capability: the public contract `src/capabilities/<name>.ts`. */
export function handlerPath(name: string): string {
  return `src/capabilities/${name}.ts`;
}

export interface HandlerStub extends SourceFile {
  problems: string[];
}

/** The problems of the stub's placeholder output (also reported when the handler file already exists). */
export function handlerStubProblems(capability: CapabilityModel): string[] {
  return checkedSample(capability.outputSchema, true).problems.map(
    (p) => `output placeholder ${p}`,
  );
}

/**
 * The handler stub: typed from agent.json, returning a placeholder that satisfies the output_schema so a fresh
 * project runs and passes its tests before any logic is written.
 */
export function generateHandlerStub(capability: CapabilityModel): HandlerStub {
  const placeholder = checkedSample(capability.outputSchema, true);
  const { name, typeName } = capability;
  const functionName = handlerFunctionName(capability.identifier);
  // A "*\/" in the description would end the comment early: written "* /" as in the generated types.
  const description = (capability.declaration.description ?? "").replace(/\*\//g, "* /");
  const amount = capability.declaration.pricing.amount;
  const jsdoc = [
    "/**",
    ` * ${name}${description ? `: ${description}` : ""}`,
    ` * Price: ${amount} USDC per job, charged only when this function returns an output that matches`,
    " * the output_schema in agent.json.",
    " *",
    " * To fail a job, throw ValidationError (400), DeadlineError (408) or InternalError (500) from",
    " * ../runtime/errors.js. Pass ctx.signal to anything cancellable: it aborts at the job's deadline.",
    " */",
  ].join("\n");
  const typesImport = `import type { ${typeName}Input, ${typeName}Output } from "../generated/types.js";`;
  const contextImport = `import type { HandlerContext } from "../runtime/types.js";`;
  const started = `${name} started`;
  const todo = "// TODO: replace this placeholder with the real work.";
  return {
    problems: placeholder.problems.map((p) => `output placeholder ${p}`),
    source: () =>
      [
        typesImport,
        contextImport,
        "",
        jsdoc,
        `export default async function ${functionName}(`,
        `  input: ${typeName}Input,`,
        "  ctx: HandlerContext,",
        `): Promise<${typeName}Output> {`,
        `  ctx.logger.info(${JSON.stringify(started)}, { fields: Object.keys(input) });`,
        `  ${todo}`,
        `  return ${JSON.stringify(placeholder.value, null, 2)};`,
        "}",
        "",
      ].join("\n"),
    print: () => {
      const parameters: Doc = [
        "(",
        indent([softline, `input: ${typeName}Input`, ",", line, "ctx: HandlerContext"]),
        ifBreak(","),
        softline,
        ")",
      ];
      const body: Doc = [
        "{",
        indent([
          hardline,
          loggerCall(started),
          ";",
          hardline,
          comment(todo),
          hardline,
          "return ",
          valueDoc(placeholder.value, { expandObjects: true }),
          ";",
        ]),
        hardline,
        "}",
      ];
      return printDoc([
        importDoc([`${typeName}Input`, `${typeName}Output`], "../generated/types.js", true),
        hardline,
        contextImport,
        hardline,
        hardline,
        blockCommentDoc(jsdoc),
        hardline,
        `export default async function ${functionName}`,
        group([parameters, `: Promise<${typeName}Output>`]),
        " ",
        body,
        hardline,
      ]);
    },
  };
}

/**
 * `ctx.logger.info("<name> started", { fields: Object.keys(input) })` as prettier prints the call: a short
 * member chain whose last argument, an object, may hug the parentheses (call-arguments.js).
 */
function loggerCall(message: string): Doc {
  const keysCall = group([
    "Object",
    ".keys",
    group(["(", indent([softline, "input"]), ifBreak(","), softline, ")"]),
  ]);
  const object = group([
    "{",
    indent([line, breakAfterOperator("fields", ":", keysCall)]),
    ifBreak(","),
    line,
    "}",
  ]);
  const head: Doc = [stringLiteral(message), ",", line];
  const allBrokenOut = group(["(", indent([line, head, object]), ifBreak(","), line, ")"], {
    shouldBreak: true,
  });
  return group([
    "ctx",
    ".logger",
    ".info",
    conditionalGroup([
      ["(", head, object, ")"],
      ["(", head, group(object, { shouldBreak: true }), ")"],
      allBrokenOut,
    ]),
  ]);
}
