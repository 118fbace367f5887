// The whole MCP protocol through the gateway against the reference server `server-everything`:
// progress both ways (the upstream timeout resets on it), resources and prompts listed by the
// grant's scope and decided like tools, completions scoped, logging relayed, sampling never offered.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  ATTESTATION_BLOCK,
  certify,
  connectGateway,
  decisionsOf,
  issueGrant,
  logLine,
  textOf,
  useWorld,
  writeConfig,
  type Connected,
  readyField,
} from "./harness.js";

const ASKING = join(process.cwd(), "test", "gateway", "fixtures", "asking-server.mjs");
const EVERYTHING = join(process.cwd(), "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");

/** server-everything over stdio; with `timeoutMs`, longer work must report progress to stay alive. */
function everythingUpstream(timeoutMs?: number): string {
  return `upstreams:\n  everything:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(EVERYTHING)}, stdio]\n${timeoutMs === undefined ? "" : `    timeout_ms: ${timeoutMs}\n`}`;
}
const everything = everythingUpstream();

describe("the whole protocol through the gateway", () => {
  const world = useWorld("protocol-agent");

  async function open(scope: string[], file: string, upstream = everything): Promise<{ gateway: Connected; grantId: string }> {
    const grantId = await issueGrant(world(), { scope: { tool: scope }, enforcement_mode: "enforce" });
    const gateway = await connectGateway(world(), writeConfig(world(), grantId, `${ATTESTATION_BLOCK}${upstream}`, file));
    await certify(world(), await readyField(gateway.stderr, "manifest_hash"));
    return { gateway, grantId };
  }

  it("passes the host's progress through both ways, strictly increasing, and resets the upstream timeout on it", async () => {
    // The upstream's timeout is also its start's: two seconds, so that a loaded machine starts it.
    const { gateway } = await open(["everything.*"], "progress.yaml", everythingUpstream(2_000));
    try {
      const progress: number[] = [];
      // Five seconds of work against an upstream timeout of two: only progress keeps it alive.
      const result = await gateway.client.callTool(
        { name: "trigger-long-running-operation", arguments: { duration: 5, steps: 10 } },
        undefined,
        {
          onprogress: (p) => progress.push(p.progress),
          timeout: 3_000,
          resetTimeoutOnProgress: true,
        },
      );
      expect(result.isError).not.toBe(true);
      expect(textOf(result)).toContain("Long running operation completed");
      // The upstream's own values (1 to 10), in order; the last may cross the result on the wire and
      // be dropped by the SDK's client, which forgets a request's token once its result is read.
      expect(progress.length).toBeGreaterThanOrEqual(8);
      expect(progress).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].slice(0, progress.length));
    } finally {
      await gateway.close();
    }
  });

  it("lists and reads resources only under `resource:<upstream>`, each read decided and ledgered", async () => {
    const { gateway, grantId } = await open(["everything.echo", "resource:everything"], "resources.yaml");
    try {
      const { resources } = await gateway.client.listResources();
      expect(resources.length).toBeGreaterThan(0);
      const { resourceTemplates } = await gateway.client.listResourceTemplates();
      expect(resourceTemplates.map((template) => template.uriTemplate)).toContain("demo://resource/dynamic/text/{resourceId}");
      const read = await gateway.client.readResource({ uri: resources[0]!.uri });
      expect(read.contents[0]!.uri).toBe(resources[0]!.uri);
      const templated = await gateway.client.readResource({ uri: "demo://resource/dynamic/text/7" });
      expect(JSON.stringify(templated.contents)).toContain("7");
      const decisions = await decisionsOf(world(), grantId);
      expect(decisions.map((record) => [record.outcome, record.request.tool, record.request.args.uri])).toEqual([
        ["allow", "resource:everything", resources[0]!.uri],
        ["allow", "resource:everything", "demo://resource/dynamic/text/7"],
      ]);
    } finally {
      await gateway.close();
    }
  });

  it("refuses resources outside the scope: none listed, a read refused with the scope gate's reason", async () => {
    const { gateway, grantId } = await open(["everything.echo"], "no-resources.yaml");
    try {
      expect((await gateway.client.listResources()).resources).toEqual([]);
      expect((await gateway.client.listResourceTemplates()).resourceTemplates).toEqual([]);
      expect((await gateway.client.listPrompts()).prompts).toEqual([]);
      await expect(gateway.client.readResource({ uri: "demo://resource/dynamic/text/1" })).rejects.toMatchObject({
        code: -32003,
        message: expect.stringContaining("refused: deny"),
      });
      const decisions = await decisionsOf(world(), grantId);
      expect(decisions.map((record) => [record.outcome, record.request.tool])).toEqual([["deny", "resource:everything"]]);
    } finally {
      await gateway.close();
    }
  });

  it("lists and gets only the prompts the scope names, completes only theirs, and refuses the rest", async () => {
    const { gateway } = await open(["prompt:everything.simple-prompt", "prompt:everything.completable-prompt"], "prompts.yaml");
    try {
      const names = (await gateway.client.listPrompts()).prompts.map((prompt) => prompt.name).sort();
      expect(names).toEqual(["completable-prompt", "simple-prompt"]);
      const simple = await gateway.client.getPrompt({ name: "simple-prompt" });
      expect(simple.messages.length).toBeGreaterThan(0);
      await expect(gateway.client.getPrompt({ name: "args-prompt", arguments: { city: "Paris" } })).rejects.toMatchObject({ code: -32003 });
      const completed = await gateway.client.complete({
        ref: { type: "ref/prompt", name: "completable-prompt" },
        argument: { name: "department", value: "En" },
      });
      expect(completed.completion.values).toContain("Engineering");
      await expect(
        gateway.client.complete({ ref: { type: "ref/prompt", name: "args-prompt" }, argument: { name: "city", value: "P" } }),
      ).rejects.toMatchObject({ code: -32003 });
    } finally {
      await gateway.close();
    }
  });

  it("relays the upstream's log messages at the host's level and offers no tool that needs sampling, elicitation or roots", async () => {
    const { gateway } = await open(["everything.*"], "logging.yaml");
    try {
      const messages: { level: string; logger?: string | undefined }[] = [];
      gateway.client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
        messages.push(notification.params);
      });
      await gateway.client.setLoggingLevel("debug");
      await gateway.client.callTool({ name: "toggle-simulated-logging", arguments: {} });
      const deadline = Date.now() + 20_000;
      while (messages.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(messages.length).toBeGreaterThan(0);
      expect(messages[0]!.logger?.startsWith("everything")).toBe(true);
      const tools = (await gateway.client.listTools()).tools.map((tool) => tool.name);
      expect(tools).toContain("echo");
      for (const asking of ["trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"])
        expect(tools).not.toContain(asking);
    } finally {
      await gateway.close();
    }
  });

  it("answers a host that offers sampling with the same tools: upstream requests are not relayed", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["everything.*"] }, enforcement_mode: "observe" });
    const gateway = await connectGateway(world(), writeConfig(world(), grantId, everything, "sampling.yaml"));
    try {
      const host = gateway.client as Client;
      expect(host.getServerCapabilities()?.prompts).toBeDefined();
      const tools = (await host.listTools()).tools.map((tool) => tool.name);
      expect(tools).not.toContain("trigger-sampling-request");
    } finally {
      await gateway.close();
    }
  });

  it("refuses an upstream's sampling, elicitation and roots requests with a clear error", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["asking.*"] }, enforcement_mode: "observe" });
    const upstream = `upstreams:\n  asking:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(ASKING)}]\n`;
    const gateway = await connectGateway(world(), writeConfig(world(), grantId, upstream, "asking.yaml"));
    try {
      for (const [tool, method] of [
        ["ask_sampling", "sampling/createMessage"],
        ["ask_elicitation", "elicitation/create"],
        ["ask_roots", "roots/list"],
      ] as const) {
        const text = textOf(await gateway.client.callTool({ name: tool, arguments: {} }));
        expect(text).toContain("error -32601");
        expect(text).toContain(`does not relay \`${method}\` from an upstream to the host`);
      }
      expect((await logLine(gateway.stderr, "upstream request refused"))["upstream"]).toBe("asking");
    } finally {
      await gateway.close();
    }
  });

  it("lets a policy bound reads by `args.uri`, and refuses an over-long URI before any decision", async () => {
    const grantId = await issueGrant(world(), {
      scope: { tool: ["resource:everything"] },
      enforcement_mode: "enforce",
      policy: `startsWith(args.uri, "demo://resource/dynamic/text/")`,
    });
    const gateway = await connectGateway(world(), writeConfig(world(), grantId, `${ATTESTATION_BLOCK}${everything}`, "uri-policy.yaml"));
    try {
      await certify(world(), await readyField(gateway.stderr, "manifest_hash"));
      expect((await gateway.client.readResource({ uri: "demo://resource/dynamic/text/3" })).contents.length).toBe(1);
      await expect(gateway.client.readResource({ uri: "demo://resource/dynamic/blob/3" })).rejects.toMatchObject({ code: -32003 });
      await expect(gateway.client.readResource({ uri: `demo://resource/dynamic/text/${"9".repeat(2_100)}` })).rejects.toMatchObject({
        code: -32602,
      });
      const decisions = await decisionsOf(world(), grantId);
      expect(decisions.map((record) => [record.request.args.uri, record.outcome === "allow"])).toEqual([
        ["demo://resource/dynamic/text/3", true],
        ["demo://resource/dynamic/blob/3", false],
      ]);
    } finally {
      await gateway.close();
    }
  });

  it("routes by what the upstreams list: a resource to an upstream the grant covers, a prompt to the first upstream offering it", async () => {
    const twice = `${everything}  everything2:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(EVERYTHING)}, stdio]\n`;
    const grantId = await issueGrant(world(), {
      scope: { tool: ["resource:everything2", "prompt:everything2.simple-prompt"] },
      enforcement_mode: "enforce",
    });
    const gateway = await connectGateway(world(), writeConfig(world(), grantId, `${ATTESTATION_BLOCK}${twice}`, "twice.yaml"));
    try {
      await certify(world(), await readyField(gateway.stderr, "manifest_hash"));
      const uri = "demo://resource/dynamic/text/5";
      // Both upstreams serve the URI: the read goes to the one the grant covers.
      expect((await gateway.client.readResource({ uri })).contents.length).toBe(1);
      // The first upstream keeps a prompt name both offer, so the grant's entry for the second covers nothing.
      expect((await gateway.client.listPrompts()).prompts).toEqual([]);
      await expect(gateway.client.getPrompt({ name: "simple-prompt" })).rejects.toMatchObject({ code: -32003 });
      await expect(gateway.client.readResource({ uri: "nothing://served/here" })).rejects.toMatchObject({ code: -32002 });
      const decisions = await decisionsOf(world(), grantId);
      expect(decisions.map((record) => [record.request.tool, record.outcome])).toEqual([
        ["resource:everything2", "allow"],
        ["prompt:everything.simple-prompt", "deny"],
      ]);
    } finally {
      await gateway.close();
    }
  });
});
