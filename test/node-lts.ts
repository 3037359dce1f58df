// The supported Node.js LTS the Deploy section names for production images (node:24-bookworm-slim), as the
// suite checks it: the npm registry's `node` package (test/e2e/node-lts.test.ts) and a local stand-in of the
// image built by the shared containers setup.sh (test/containers/node-lts.test.ts), with this npm.
export const NODE_LTS = "24.21.0";
export const NODE_LTS_NPM = "11.6.2";
/** The image the Deploy section's `--build-arg NODE_IMAGE=` names. */
export const NODE_LTS_IMAGE = "node:24-bookworm-slim";
