// `npm run dev`: the server in dev mode, restarted by `tsx watch` on every change.
// Dev mode skips the x402 payment gate (anyone can call the agent for free); validation, deadlines and
// error handling work exactly as in production. It refuses to start when NODE_ENV=production.
process.env.SERVICE_DEV_MODE = "true";
await import("./server.js");
