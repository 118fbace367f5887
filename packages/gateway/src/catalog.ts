// The tools behind the gateway: the name each is exposed under, its route, its action and the manifest hash.
import { randomUUID } from "node:crypto";
import { entryCovers } from "@agent-authority/lattice";
import { manifestHash, toolDefinition, type ManifestTool } from "@agent-authority/sdk";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { actionTool, DEFAULT_MAPPING } from "./action.js";
import type { ToolMapping } from "./config.js";
import { GATEWAY_LIMITS } from "./limits.js";
import type { Log } from "./log.js";
import type { Upstream } from "./upstreams.js";

export interface Route {
  /** The name the client sees: the upstream's own tool name. */
  readonly exposed: string;
  readonly upstream: Upstream;
  readonly tool: Tool;
  readonly mapping: ToolMapping;
  /** The action's `tool`, which the grant's scope and policy see. */
  readonly action: string;
  /**
   * Why no grant can name the action (characters a scope cannot hold, or too long), or undefined.
   * Such a tool is never listed; a call to it is sealed when the server can record it, and refused.
   */
  readonly unnameable: string | undefined;
}

export interface Catalog {
  readonly routes: ReadonlyMap<string, Route>;
  /**
   * The manifest hash of every upstream tool (docs/decisions/0502-manifest-hash.md), kind `mcp`, by
   * action name, each with its definition (name, title, description, schemas, annotations).
   */
  readonly manifestHash: string;
}

/**
 * Builds the catalog from the upstreams' current tool lists. Two upstreams offering one name: the
 * upstream listed first in the configuration keeps it and the other's tool is not offered.
 */
export function buildCatalog(
  upstreams: readonly Upstream[],
  mappings: ReadonlyMap<string, ToolMapping>,
  log: Log,
  reported: Set<string> = new Set(),
): Catalog {
  const routes = new Map<string, Route>();
  const actions: ManifestTool[] = [];
  for (const upstream of upstreams) {
    for (const tool of upstream.tools) {
      const mapping = mappings.get(`${upstream.name}.${tool.name}`) ?? DEFAULT_MAPPING;
      const action = actionTool(upstream.name, tool.name, mapping);
      actions.push({ name: action, kind: "mcp", definition: toolDefinition(tool) });
      const taken = routes.get(tool.name);
      if (taken !== undefined) {
        log.warn("tool name offered twice; the first upstream keeps it", {
          tool: tool.name,
          kept: taken.upstream.name,
          hidden: upstream.name,
        });
        continue;
      }
      const unnameable = unnameableReason(action);
      if (unnameable !== undefined && !reported.has(`${upstream.name}\u0000${tool.name}`)) {
        // Logged once per upstream and name for the gateway's life, however often the list changes.
        reported.add(`${upstream.name}\u0000${tool.name}`);
        log.warn("tool not listed: the authority server cannot name it", { upstream: upstream.name, tool: tool.name, reason: unnameable });
      }
      routes.set(tool.name, { exposed: tool.name, upstream, tool, mapping, action, unnameable });
    }
  }
  return { routes, manifestHash: hashOf(actions, log) };
}

/** The names a grant's scope can hold, as the authority server checks them (linear, no backtracking). */
const NAMEABLE = /^[A-Za-z0-9_.:*-]+$/;

/** Why the authority server could never name `action` in a scope, or undefined when it can. */
export function unnameableReason(action: string): string | undefined {
  if (action.length > GATEWAY_LIMITS.actionNameCharsMax)
    return `the action \`${action.slice(0, 40)}…\` is over ${GATEWAY_LIMITS.actionNameCharsMax} characters`;
  if (!NAMEABLE.test(action)) return `the action ${JSON.stringify(action)} has characters outside \`A-Z a-z 0-9 _ . : * -\``;
  return undefined;
}

/**
 * The hash of the tools; when a definition has no canonical form (a schema nested past the depth
 * limit, a lone surrogate) the hash is of a random value, which no certificate can ever match, so an
 * `enforce` grant refuses until the upstream is fixed.
 */
function hashOf(actions: readonly ManifestTool[], log: Log): string {
  try {
    return manifestHash(actions);
  } catch (error) {
    log.error("a tool definition has no canonical form; the manifest cannot be certified", {
      error: error instanceof Error ? error.message : String(error),
    });
    return manifestHash([{ name: `unreadable-${randomUUID()}`, kind: "mcp", definition: { name: "unreadable" } }]);
  }
}

/**
 * The routes whose action the grant's scope covers (`ns.*` covers `ns.` names, as on the server),
 * of the upstreams that are up: a down upstream's tools leave the list until it is back.
 */
export function routesInScope(catalog: Catalog, scope: readonly string[]): Route[] {
  return [...catalog.routes.values()].filter(
    (route) => route.unnameable === undefined && route.upstream.alive && scope.some((entry) => entryCovers(entry, route.action)),
  );
}
