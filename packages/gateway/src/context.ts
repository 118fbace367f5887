// What every session of the gateway shares, in a module of its own so that no module imports in a circle.
import type { AuthorityClient } from "@agent-authority/sdk";
import type { Catalog } from "./catalog.js";
import type { GatewayConfig } from "./config.js";
import type { Log } from "./log.js";
import type { Upstream } from "./upstreams.js";

/** What every session shares: the configuration, the authority client, the log and the live catalog. */
export interface GatewayContext {
  readonly config: GatewayConfig;
  readonly authority: AuthorityClient;
  readonly log: Log;
  catalog(): Catalog;
  /** The upstreams, in configuration order, up or down. */
  upstreams(): readonly Upstream[];
}
