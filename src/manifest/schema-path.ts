import { fileURLToPath } from "node:url";

/**
 * Absolute path of schema/agent.schema.json. This module runs from src/manifest/*.ts (tests) and from
 * dist/manifest/*.js (built CLI); both sit two levels below the package root.
 */
export const manifestJsonSchemaPath: string = fileURLToPath(new URL("../../schema/agent.schema.json", import.meta.url));
