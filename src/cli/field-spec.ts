import {
  didYouMean,
  fieldNameProblem,
  FIELD_TYPES,
  type FieldDescriptor,
  TYPE_ALIASES,
} from "../manifest/index.js";
import { CliError } from "./errors.js";

/**
 * Fields given on the command line, e.g. `--input text:string! --input tags:string[] --output summary:string`:
 * `<name>:<type>`, where type is one of string, number, integer, boolean, object, array; `[]` after a type
 * makes an array of it; `!` marks a field required, `?` optional (inputs are optional and outputs required
 * unless marked, as in agent.json).
 */
export function parseFieldSpecs(
  specs: string[],
  flag: "--input" | "--output",
): Record<string, FieldDescriptor> {
  const fields: Record<string, FieldDescriptor> = {};
  for (const spec of specs) {
    const match = /^([^:]+):([A-Za-z]+)(\[\])?([!?])?$/.exec(spec);
    if (!match)
      throw new CliError(
        `${flag} "${spec}": expected <name>:<type>, e.g. text:string! or tags:string[] (types: ${FIELD_TYPES.join(", ")}; ! = required, ? = optional)`,
      );
    const [, name, type, array, mark] = match as unknown as [
      string,
      string,
      string,
      string | undefined,
      string | undefined,
    ];
    const nameProblem = fieldNameProblem(name);
    if (nameProblem) throw new CliError(`${flag} "${spec}": ${nameProblem}`);
    if (!(FIELD_TYPES as readonly string[]).includes(type)) {
      throw new CliError(
        `${flag} "${spec}": unknown type "${type}"${didYouMean(type, FIELD_TYPES, TYPE_ALIASES)} (types: ${FIELD_TYPES.join(", ")})`,
      );
    }
    if (Object.hasOwn(fields, name))
      throw new CliError(`${flag} "${spec}": field "${name}" is given twice`);
    const base = { type } as FieldDescriptor;
    const field: FieldDescriptor = array ? { type: "array", items: base } : base;
    if (mark === "!") field.required = true;
    if (mark === "?") field.required = false;
    fields[name] = field;
  }
  return fields;
}
