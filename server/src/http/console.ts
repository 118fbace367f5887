// The approvals console: static files under server/console served at /console with a strict
// Content-Security-Policy, plus the endpoint table the console reads to offer only what a key may do.

import { readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ENDPOINTS } from "@agent-authority/api";
import express, { type Request, type Response } from "express";

export const CONSOLE_PATH = "/console";

/**
 * No inline script or style, nothing from another origin, no framing, no plugins, no <base>. Every
 * script and style is a file served from /console itself; the console sets sizes through the
 * CSSOM and draws with SVG attributes, which this policy allows.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "font-src 'none'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const MEDIA_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
};

/** At most this many files are served; the console is a handful. */
const CONSOLE_FILES_MAX = 64;

/** server/console, from server/src/http (tests) and from server/dist/http (npm start) alike. */
const CONSOLE_DIR = fileURLToPath(new URL("../../console/", import.meta.url));

interface Asset {
  readonly body: Buffer;
  readonly type: string;
}

/** Reads the console once at start: only the files found then are served, so no path is ever resolved from a request. */
function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return assets; // A server without its console still serves v1; /console answers 404.
  }
  for (const name of names.sort()) {
    const type = MEDIA_TYPES[extname(name)];
    if (type === undefined || !/^[a-z0-9-]+\.[a-z]+$/.test(name)) continue;
    if (assets.size >= CONSOLE_FILES_MAX) throw new Error(`more than ${CONSOLE_FILES_MAX} console files`);
    assets.set(name, { body: readFileSync(join(dir, name)), type });
  }
  return assets;
}

/** The endpoint table without summaries: what the console needs to decide what to offer. */
function endpointTable(): Buffer {
  const endpoints = ENDPOINTS.map((e) => ({ method: e.method, path: e.path, roles: e.roles, human: e.human }));
  return Buffer.from(JSON.stringify({ endpoints }));
}

function securityHeaders(res: Response): void {
  res.setHeader("content-security-policy", CONSOLE_CSP);
  res.setHeader("x-content-type-options", "nosniff");
  res.setHeader("x-frame-options", "DENY");
  res.setHeader("referrer-policy", "no-referrer");
  res.setHeader("cross-origin-opener-policy", "same-origin");
  res.setHeader("cross-origin-resource-policy", "same-origin");
  res.setHeader("cache-control", "no-store");
}

/** The router mounted at /console. */
export function consoleRouter(dir: string = CONSOLE_DIR): express.Router {
  const assets = loadAssets(dir);
  assets.set("endpoints.json", { body: endpointTable(), type: MEDIA_TYPES[".json"]! });
  const router = express.Router({ strict: true });
  const send = (res: Response, asset: Asset, template: string): void => {
    // The metric label: the route's template, never the file asked for (app.ts).
    res.locals["routeTemplate"] = template;
    securityHeaders(res);
    res.status(200).type(asset.type).send(asset.body);
  };
  router.get("/", (req: Request, res: Response, next) => {
    // `/console` without the slash: relative module paths need the slash, so redirect to it.
    if (!req.originalUrl.split("?")[0]!.endsWith("/")) {
      res.locals["routeTemplate"] = CONSOLE_PATH;
      securityHeaders(res);
      res.redirect(308, `${CONSOLE_PATH}/`);
      return;
    }
    const index = assets.get("index.html");
    if (index === undefined) next();
    else send(res, index, `${CONSOLE_PATH}/`);
  });
  router.get("/:file", (req: Request, res: Response, next) => {
    const asset = assets.get(String(req.params["file"]));
    if (asset === undefined) next();
    else send(res, asset, `${CONSOLE_PATH}/:file`);
  });
  return router;
}
