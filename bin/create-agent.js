#!/usr/bin/env node
import module from "node:module";

// Node 22.1+ keeps compiled code of the modules below on disk (in the OS temp folder), so later runs skip
// parsing and compiling them. Node 20 has no such cache: nothing happens there.
module.enableCompileCache?.();

const { main } = await import("../dist/cli/main.js");
process.exitCode = await main(process.argv);
