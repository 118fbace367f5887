// `authority manifest`: the tools an agent's code registers, its manifest hash, and a comparison
// with the tool scope of a family or grant (least privilege).
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { compileFamily } from "@agent-authority/families";
import { option, parseArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { gatewayPackage } from "../optional-packages.js";
import type { Terminal } from "../terminal.js";

export const manifestCommand: Command = {
  name: "manifest",
  summary: "list the tools an agent's code registers, with its manifest hash",
  usage: `authority manifest DIR [--against FILE] [--format text|json]
       authority manifest --config GATEWAY.yaml [--format text|json]

Reads the TypeScript and JavaScript sources under DIR (MCP server.tool/registerTool registrations
and the SDK's guard calls) and prints every tool with where it is registered, the manifest hash a certificate
pins, and any registration that could not be resolved.

  --against FILE   a family (.yaml, .yml) or a grant issue body (.json): also list the tools the
                   code uses but the scope does not grant, and the granted entries it never uses
  --config FILE    a gateway configuration: start its upstream MCP servers, read their tools and
                   print the manifest hash the gateway attests for them (names, titles,
                   descriptions, input and output schemas, annotations), then stop them
  --format FMT     text (default) or json

Exit status: 0 done and complete, 1 the manifest is incomplete (a registration could not be
resolved or a source not read) or --against found tools used but not granted (or FILE has
errors), 2 usage error (no such directory, unknown option).
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { against: "string", format: "string", config: "string" });
    const format = option(args, "format") ?? "text";
    if (format !== "text" && format !== "json") throw new UsageError("`--format` is `text` or `json`");
    const config = option(args, "config");
    if (config !== undefined) {
      if (args.positionals.length > 0 || option(args, "against") !== undefined)
        throw new UsageError("`--config` takes no directory and no `--against`");
      return upstreamManifest(config, format, terminal);
    }
    if (args.positionals.length !== 1) throw new UsageError("name one directory: `authority manifest DIR`");
    const dir = resolve(terminal.cwd, args.positionals[0]!);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`\`${args.positionals[0]}\` is not a directory`);
    const againstPath = option(args, "against");
    let granted: { tools: readonly string[]; placeholders: readonly string[] } | undefined;
    const manifests = await import("../manifest/index.js");
    if (againstPath !== undefined) {
      const loaded = loadScope(resolve(terminal.cwd, againstPath), againstPath, manifests.grantedToolsOf);
      if (!loaded.ok) {
        terminal.err.write(`${loaded.message}\n`);
        return EXIT.failed;
      }
      granted = loaded.granted;
    }
    const manifest = manifests.buildManifest(dir);
    const comparison = granted === undefined ? undefined : manifests.compareManifest(manifest, granted.tools);
    if (format === "json") {
      terminal.out.write(
        `${JSON.stringify({ directory: relative(terminal.cwd, dir) || ".", ...manifest, ...(comparison === undefined ? {} : { against: againstPath, comparison }) }, null, 2)}\n`,
      );
    } else {
      terminal.out.write(manifests.renderManifest(manifest));
      if (comparison !== undefined) {
        terminal.out.write(manifests.renderComparison(comparison, againstPath!));
        for (const placeholder of granted!.placeholders)
          terminal.out.write(`  not compared: \`${placeholder}\` is chosen at instantiation\n`);
      }
    }
    // An incomplete manifest must not pass a CI step that certifies what it lists.
    if (!manifest.complete) terminal.err.write("authority manifest: the manifest is incomplete (see the warnings); do not certify it\n");
    return !manifest.complete || (comparison !== undefined && comparison.used_not_granted.length > 0) ? EXIT.failed : EXIT.ok;
  },
};

/** `authority manifest --config FILE`: the hash the gateway attests for the upstreams of FILE. */
async function upstreamManifest(shown: string, format: "text" | "json", terminal: Terminal): Promise<number> {
  const path = resolve(terminal.cwd, shown);
  if (!existsSync(path) || !statSync(path).isFile()) throw new UsageError(`\`${shown}\` is not a file`);
  const gateway = await gatewayPackage("manifest --config");
  const parsed = gateway.parseGatewayConfig(readFileSync(path, "utf8"), shown);
  if (!parsed.ok) {
    for (const d of parsed.diagnostics) terminal.err.write(`${d.file}:${d.line}:${d.column}: error: ${d.message}\n`);
    return EXIT.failed;
  }
  let attested: Awaited<ReturnType<typeof gateway.attestUpstreams>>;
  try {
    attested = await gateway.attestUpstreams(
      parsed.config,
      dirname(path),
      gateway.jsonLog(() => undefined),
    );
  } catch (error) {
    terminal.err.write(`authority manifest: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT.failed;
  }
  if (format === "json") {
    terminal.out.write(`${JSON.stringify({ config: shown, manifest_hash: attested.manifestHash, tools: attested.tools }, null, 2)}\n`);
  } else {
    for (const tool of attested.tools) terminal.out.write(`${tool.action}  (mcp, ${tool.upstream}: ${tool.tool})\n`);
    terminal.out.write(`manifest_hash: ${attested.manifestHash}\n`);
  }
  return EXIT.ok;
}

type GrantedTools = { readonly tools: readonly string[]; readonly placeholders: readonly string[] };

/** The scope of a family (compiled, so a broken family is reported) or of a grant body in JSON. */
function loadScope(
  path: string,
  shown: string,
  grantedToolsOf: (source: unknown) => GrantedTools,
): { ok: true; granted: GrantedTools } | { ok: false; message: string } {
  if (!existsSync(path) || !statSync(path).isFile()) throw new UsageError(`\`${shown}\` is not a file`);
  const text = readFileSync(path, "utf8");
  if (/\.json$/i.test(path)) {
    try {
      return { ok: true, granted: grantedToolsOf(JSON.parse(text)) };
    } catch (error) {
      return { ok: false, message: `${shown}: not JSON: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
  const compiled = compileFamily(text, shown);
  if (!compiled.ok) {
    const first = compiled.diagnostics.find((d) => d.severity === "error")!;
    return {
      ok: false,
      message: `${shown}:${first.range.start.line}:${first.range.start.column}: error[${first.code}]: ${first.message} (run \`authority lint ${shown}\`)`,
    };
  }
  return { ok: true, granted: grantedToolsOf(compiled.body) };
}
