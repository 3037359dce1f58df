/** Words that cannot name a function or variable in strict-mode ES modules. */
const RESERVED = new Set(
  (
    "await break case catch class const continue debugger default delete do else enum export extends false " +
    "finally for function if implements import in instanceof interface let new null package private protected " +
    "public return static super switch this throw true try typeof var void while with yield arguments eval"
  ).split(" "),
);

/** A function name for a handler: the capability's identifier unless that is a reserved word. */
export function handlerFunctionName(identifier: string): string {
  return RESERVED.has(identifier) ? `${identifier}Handler` : identifier;
}

/** A JS property key: bare when it is a plain identifier, quoted otherwise. */
export function propertyKey(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}
