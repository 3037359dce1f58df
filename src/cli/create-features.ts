/**
 * `create`'s side of optional features (src/features.ts): the --features flag, the question asked in a
 * terminal, and the summary line. `all` is every feature, `none` the core alone; --yes takes the defaults.
 */
import { DEFAULT_FEATURES, FEATURES, FeatureNameError, parseFeatureList } from "../features.js";
import { CliError } from "./errors.js";
import type { Prompter } from "./prompts.js";

/** --features <list> as feature names; undefined when the flag was not given. Throws CliError on a bad name. */
export function featuresFromFlag(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  // Likely an unset shell variable (--features "$FEATURES"): the core alone is asked for as "none".
  if (text.trim() === "")
    throw new CliError(
      '--features is empty: list the features (e.g. mcp,console), "all", or "none" for the core alone',
    );
  try {
    return parseFeatureList(text);
  } catch (error) {
    if (error instanceof FeatureNameError) throw new CliError(`--features: ${error.message}`);
    throw error;
  }
}

/** The features question: each feature with its one-line summary, then a comma-separated answer. */
export async function askFeatures(prompter: Prompter): Promise<string[]> {
  const width = Math.max(...FEATURES.map((f) => f.name.length));
  prompter.say(
    [
      "Optional features (each is a folder of src/runtime/ with its packages; add or remove one later",
      "with npm run add -- <feature> / npm run remove -- <feature>):",
      ...FEATURES.map((f) => `  ${f.name.padEnd(width)}  ${f.summary}`),
      "",
    ].join("\n"),
  );
  const answer = await prompter.ask({
    message: "Features (comma-separated, all or none)",
    default: DEFAULT_FEATURES.join(", "),
    validate: (text) => {
      try {
        parseFeatureList(text);
        return undefined;
      } catch (error) {
        if (error instanceof FeatureNameError) return error.message;
        throw error;
      }
    },
  });
  return parseFeatureList(answer);
}

/** "mcp, console" for the summary; "none (the core only)" for none. */
export function describeFeatures(features: readonly string[]): string {
  return features.length === 0 ? "none (the core and EVM payments only)" : features.join(", ");
}
