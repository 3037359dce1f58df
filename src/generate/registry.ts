import type { AgentModel } from "../manifest/model.js";
import { GENERATED_HEADER } from "./header.js";
import { propertyKey } from "./names.js";
import type { SourceFile } from "./source-file.js";
import { Code, expandedObjectText, importText, stringLiteral } from "./print/js.js";

/**
 * The capability registry the server runs: each capability's declaration (what GET /about shows), price in
 * USDC atomic units, validators and handler, plus how to load the discovery data (discovery.ts: the OpenAPI
 * document and examples). Typing each entry as Capability<XInput, XOutput> makes `npm run typecheck` fail
 * when a handler no longer matches agent.json. Handlers and the discovery data are imported when first
 * needed (runtime/handlers.ts lazyHandler; production imports them all before it listens), so start-up
 * does not grow with the number of capabilities.
 */
export function generateRegistry(model: AgentModel): SourceFile {
  const types = model.capabilities.flatMap((c) => [`${c.typeName}Input`, `${c.typeName}Output`]);
  const validators = model.capabilities.flatMap((c) => [
    `validate${c.typeName}Input`,
    `validate${c.typeName}Output`,
  ]);
  // The header and the runtime's imports: the same in both renderings.
  const preamble = [
    GENERATED_HEADER,
    `import { lazyHandler } from "../runtime/handlers.js";`,
    `import type { AgentDefinition, Capability } from "../runtime/types.js";`,
  ];
  return {
    source: () => {
      const lines = [...preamble];
      if (model.capabilities.length) {
        lines.push(`import type { ${types.join(", ")} } from "./types.js";`);
        lines.push(`import { ${validators.join(", ")} } from "./validators.js";`);
      }
      lines.push("");
      for (const c of model.capabilities) {
        lines.push(
          `const ${c.identifier}Capability: Capability<${c.typeName}Input, ${c.typeName}Output> = {`,
          `  name: ${JSON.stringify(c.name)},`,
          `  declaration: ${JSON.stringify(c.declaration)},`,
          `  priceAtomic: ${JSON.stringify(c.priceAtomic)},`,
          `  validateInput: validate${c.typeName}Input,`,
          `  validateOutput: validate${c.typeName}Output,`,
          `  handler: ${lazyHandlerText(c, "")},`,
          `};`,
          "",
        );
      }
      const entries = model.capabilities.map(
        (c) => `${propertyKey(c.name)}: ${c.identifier}Capability`,
      );
      lines.push(
        `export const agent: AgentDefinition = {`,
        `  name: ${JSON.stringify(model.name)},`,
        `  version: ${JSON.stringify(model.version)},`,
        `  description: ${JSON.stringify(model.description)},`,
        `  capabilities: { ${entries.join(", ")} },`,
        `  loadDiscovery: () => import("./discovery.js").then((m) => m.discovery),`,
        `};`,
      );
      return lines.join("\n");
    },
    print: () => {
      const out = [...preamble];
      if (model.capabilities.length) {
        out.push(
          importText(types, "./types.js", true),
          importText(validators, "./validators.js", false),
        );
      }
      for (const c of model.capabilities) {
        // The type arguments break when `const x: Capability<A, B> =` does not fit on a line.
        const left = `const ${c.identifier}Capability: Capability<${c.typeName}Input, ${c.typeName}Output>`;
        const head =
          left.length + 2 <= 100
            ? `${left} =`
            : `const ${c.identifier}Capability: Capability<\n  ${c.typeName}Input,\n  ${c.typeName}Output\n> =`;
        // The source writes each entry over several lines: prettier keeps the object expanded.
        // The handler (last) is printed by lazyHandlerText, which knows how prettier breaks that call.
        const entry = expandedObjectText(head, [
          ["name", c.name],
          ["declaration", c.declaration],
          ["priceAtomic", c.priceAtomic],
          ["validateInput", new Code(`validate${c.typeName}Input`)],
          ["validateOutput", new Code(`validate${c.typeName}Output`)],
        ]);
        const close = entry.lastIndexOf("\n");
        const pad = entry.slice(close + 1).replace("};", "");
        out.push(
          "",
          `${entry.slice(0, close)}\n${pad}  handler: ${lazyHandlerText(c, pad)},${entry.slice(close)}`,
        );
      }
      const capabilities = Object.fromEntries(
        model.capabilities.map((c) => [c.name, new Code(`${c.identifier}Capability`)]),
      );
      out.push(
        "",
        expandedObjectText("export const agent: AgentDefinition =", [
          ["name", model.name],
          ["version", model.version],
          ["description", model.description],
          ["capabilities", capabilities],
          ["loadDiscovery", new Code('() => import("./discovery.js").then((m) => m.discovery)')],
        ]),
      );
      return `${out.join("\n")}\n`;
    },
  };
}

/**
 * The handler entry: the capability's module, imported on first use (its type is checked against the entry's
 * Capability<XInput, XOutput>, as a static import was). Laid out as prettier lays it out as a property of the
 * object whose properties are indented by `pad` + 2: on one line when it fits, else the arrow on its own
 * line, else its body too.
 */
function lazyHandlerText(c: AgentModel["capabilities"][number], pad: string): string {
  const load = `import(${stringLiteral(`../capabilities/${c.name}.js`)})`;
  if (`${pad}  handler: lazyHandler(() => ${load}),`.length <= 100)
    return `lazyHandler(() => ${load})`;
  if (`${pad}    () => ${load},`.length <= 100)
    return `lazyHandler(\n${pad}    () => ${load},\n${pad}  )`;
  return `lazyHandler(\n${pad}    () =>\n${pad}      ${load},\n${pad}  )`;
}
