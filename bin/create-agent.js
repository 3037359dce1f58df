#!/usr/bin/env node
import module from "node:module";

// Node 22.1+ keeps compiled code of the modules below on disk (in the OS temp folder), so later runs skip
// parsing and compiling them. Node 20 has no such cache: nothing happens there.
module.enableCompileCache?.();

// Output piped into a reader that stopped reading (`| head`): the rest has nowhere to go, and that is no
// reason to crash a command that has done (or is doing) its work.
for (const stream of [process.stdout, process.stderr])
  stream.on("error", (error) => {
    if (error.code !== "EPIPE") throw error;
  });

const { main } = await import("../dist/cli/main.js");
process.exitCode = await main(process.argv);
