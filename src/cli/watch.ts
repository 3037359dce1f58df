/**
 * `create-agent generate --watch`: regenerate on every save of agent.json until Ctrl-C.
 * Resolves to the exit code once stopped.
 */
export async function watchManifest(root: string): Promise<number> {
  throw new Error(`watch mode is not implemented yet (${root})`);
}
