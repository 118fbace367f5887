// `authority gateway`: the MCP gateway between an agent's MCP host and its MCP servers; loaded only when used.
import { docPath } from "../docs-path.js";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { option, parseArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { gatewayPackage } from "../optional-packages.js";

export const gatewayCommand: Command = {
  name: "gateway",
  summary: "run the MCP gateway: every tool call decided by the authority server first",
  usage: `authority gateway --config FILE [--listen HOST:PORT]

Serves MCP to one client on stdin/stdout (or streamable HTTP at http://HOST:PORT/mcp with
--listen) and forwards to the upstream MCP servers of FILE. It lists only the tools the grant's
scope allows, decides every tools/call with the authority server before forwarding it, waits for
a human on a gated call, settles what an allowed call spent, and refuses every call the server
cannot decide. Logs are JSON lines on stderr. Configuration: ${docPath("mcp-gateway.md")}.

  --config FILE       the gateway configuration (YAML)
  --listen HOST:PORT  serve streamable HTTP instead of stdio; every request must carry
                      \`Authorization: Bearer TOKEN\`, TOKEN read from the variable named by
                      \`http.token_env\` (at least 32 characters)

Exit status: 0 after the client closed the session, 1 the configuration has errors or an upstream
did not start, 2 usage error (no --config, unreadable FILE, key variable unset).
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { config: "string", listen: "string" });
    if (args.positionals.length > 0) throw new UsageError("`gateway` takes no arguments; name the configuration with `--config FILE`");
    const shown = option(args, "config");
    if (shown === undefined) throw new UsageError("name the configuration: `authority gateway --config gateway.yaml`");
    const path = resolve(terminal.cwd, shown);
    if (!existsSync(path) || !statSync(path).isFile()) throw new UsageError(`\`${shown}\` is not a file`);
    const gateway = await gatewayPackage("gateway");
    const listenText = option(args, "listen");
    const listen = listenText === undefined ? undefined : gateway.parseListen(listenText);
    if (typeof listen === "string") throw new UsageError(listen);
    const parsed = gateway.parseGatewayConfig(readFileSync(path, "utf8"), shown);
    if (!parsed.ok) {
      for (const d of parsed.diagnostics) terminal.err.write(`${d.file}:${d.line}:${d.column}: error: ${d.message}\n`);
      return EXIT.failed;
    }
    const keyEnv = parsed.config.authority.keyEnv;
    const apiKey = terminal.env[keyEnv];
    if (apiKey === undefined || apiKey === "") throw new UsageError(`the agent's key is read from \`${keyEnv}\`, which is not set`);
    let listenToken: string | undefined;
    if (listen !== undefined) {
      const tokenEnv = parsed.config.http.tokenEnv;
      if (tokenEnv === undefined)
        throw new UsageError("`--listen` needs a bearer token: name its environment variable in `http.token_env`");
      listenToken = terminal.env[tokenEnv];
      const { httpTokenCharsMin: min, httpTokenCharsMax: max } = gateway.GATEWAY_LIMITS;
      if (listenToken === undefined || listenToken.length < min || listenToken.length > max || !/^[\x21-\x7e]+$/.test(listenToken)) {
        throw new UsageError(
          `the listener's bearer token is read from \`${tokenEnv}\`, which must hold ${min} to ${max} printable characters`,
        );
      }
    }
    const log = gateway.jsonLog((line) => terminal.err.write(line));
    let running: Awaited<ReturnType<typeof gateway.startGateway>>;
    try {
      running = await gateway.startGateway({
        config: parsed.config,
        baseDir: dirname(path),
        apiKey,
        log,
        ...(listen === undefined ? {} : { listen, listenToken }),
      });
    } catch (error) {
      terminal.err.write(`authority gateway: ${error instanceof Error ? error.message : String(error)}\n`);
      return EXIT.failed;
    }
    const stop = (): void => void running.close();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    await running.closed;
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    return EXIT.ok;
  },
};
