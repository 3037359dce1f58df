/**
 * `create`'s target folder: why a folder cannot take the project (checked before any question, and
 * again by the folder question, where the answer is asked again instead).
 */
import { resolve } from "node:path";
import { displayPath } from "../scaffold/stage.js";
import { inspectTarget, type TargetState } from "../scaffold/target.js";
import { insideToolHome, TOOL_ROOT } from "../scaffold/tool-home.js";
import type { CreateOptions } from "./create.js";
import type { Prompter } from "./prompts.js";

/**
 * Why the project cannot go into `target` ("./x is not empty (a, b)"), or undefined when it can.
 * `tool`: the folder is inside create-agent's own, where the project would get no git repository
 * of its own and would pick up the tool's configuration (its vitest config, its tsconfig).
 */
export function targetProblem(
  target: string,
  state: TargetState,
  options: Pick<CreateOptions, "force" | "insideToolRepo">,
): { kind: "folder" | "tool" | "project"; text: string } | undefined {
  if (!options.insideToolRepo && insideToolHome(target))
    return {
      kind: "tool",
      text:
        `${displayPath(target)} is inside create-agent's own folder (${TOOL_ROOT.replace(/[\\/]$/, "")}): ` +
        "the project would have no git repository of its own and would pick up this tool's configuration. " +
        "Create it elsewhere, e.g. ../my-agent, or pass --inside-tool-repo if you mean it",
    };
  if (state.kind === "file")
    return { kind: "folder", text: `${displayPath(target)} exists and is a file, not a folder` };
  if (state.kind === "blocked")
    return {
      kind: "folder",
      text: `${displayPath(target)} cannot be a folder: ${displayPath(state.file)}, on its way, is a file`,
    };
  if (state.kind === "non-empty" && state.entries.includes("agent.json"))
    return {
      kind: "project",
      text:
        `${displayPath(target)} already holds an agent project (agent.json): create would replace its manifest and handlers, even with --force. ` +
        "To bring it to this create-agent, run upgrade in it; to start over, create into another folder",
    };
  if (state.kind === "non-empty" && !options.force)
    return { kind: "folder", text: `${displayPath(target)} is not empty (${listEntries(state)})` };
  return undefined;
}

function listEntries(state: TargetState & { kind: "non-empty" }): string {
  return state.entries.slice(0, 5).join(", ") + (state.entries.length > 5 ? ", ..." : "");
}

export async function askFolder(
  prompter: Prompter,
  options: Pick<CreateOptions, "force" | "insideToolRepo">,
): Promise<string> {
  const answer = await prompter.ask({
    message: "Project folder",
    default: "my-agent",
    validate: async (folder) => {
      let state: TargetState;
      try {
        state = await inspectTarget(resolve(folder));
      } catch (error) {
        return `${displayPath(resolve(folder))} cannot be used (${(error as Error).message}): choose another folder`;
      }
      const problem = targetProblem(resolve(folder), state, options);
      if (!problem) return undefined;
      if (problem.kind !== "folder") return problem.text;
      return state.kind === "file" || state.kind === "blocked"
        ? `${problem.text}: choose another name`
        : `${problem.text}: choose a new or empty folder (or rerun with --force to write into this one)`;
    },
  });
  return resolve(answer);
}
