// Loaded into the CLI with `node --import` by create.test.ts: holds `create` right after it made its
// staging folder (the first mkdtemp), saying so on stderr, until a line comes on stdin. A reliable point
// to stop it at: writing ~70 small files takes milliseconds, too short to hit from outside.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const mkdtemp = fs.promises.mkdtemp;
let held = false;
fs.promises.mkdtemp = async (...args) => {
  const dir = await mkdtemp(...args);
  if (held) return dir;
  held = true;
  process.stderr.write(`staging ${dir}\n`);
  await new Promise((go) => process.stdin.once("data", go));
  process.stdin.destroy();
  // A signal sent before the line is handled by now (each is one event loop turn away).
  await new Promise((go) => setTimeout(go, 50));
  return dir;
};
// The CLI's `import { mkdtemp } from "node:fs/promises"` sees the wrapper.
syncBuiltinESMExports();
