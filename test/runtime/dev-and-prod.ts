// Two apps serving makeAgent() with its discovery data (discovery-fixture.ts), one in dev mode and one in
// production, for the tests that compare what each serves (discovery documents, Bazaar, base URLs, A2A).
import { afterAll, beforeAll } from "vitest";
import type { AppOptions } from "../../templates/runtime/config.js";
import { withDiscovery } from "./discovery-fixture.js";
import { makeAgent, startApp, type TestAgent } from "./helpers.js";

type App = Awaited<ReturnType<typeof startApp>>;

export interface DevAndProd {
  dev: App;
  prod: App;
  devAgent: TestAgent;
  prodAgent: TestAgent;
  close(): Promise<void>;
}

/** Starts the dev-mode app and the production one (`prodOptions`), each with an agent of its own. */
export async function startDevAndProd(prodOptions: AppOptions): Promise<DevAndProd> {
  const devAgent = withDiscovery(makeAgent());
  const prodAgent = withDiscovery(makeAgent());
  const dev = await startApp(devAgent, { devMode: true });
  const prod = await startApp(prodAgent, prodOptions);
  return {
    dev,
    prod,
    devAgent,
    prodAgent,
    close: async () => {
      await dev.close();
      await prod.close();
    },
  };
}

/**
 * The two apps of startDevAndProd for the tests of the calling file (or describe block): started before
 * them, closed after. Read its fields inside a test (they exist once started).
 */
export function devAndProdForTests(prodOptions: AppOptions): DevAndProd {
  let apps: DevAndProd | undefined;
  beforeAll(async () => {
    apps = await startDevAndProd(prodOptions);
  });
  afterAll(() => apps?.close());
  const started = (): DevAndProd => {
    if (!apps) throw new Error("the dev and production apps start in beforeAll");
    return apps;
  };
  return {
    get dev() {
      return started().dev;
    },
    get prod() {
      return started().prod;
    },
    get devAgent() {
      return started().devAgent;
    },
    get prodAgent() {
      return started().prodAgent;
    },
    close: () => started().close(),
  };
}
