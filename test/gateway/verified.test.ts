// The gateway verifies the server's word by default (keys fetched once) and with its keys pinned
// (`authority.signing_keys`): behind a forging proxy, an unsigned allow, an allow the server gave
// to a rewritten request, a stripped signature and an earlier allow replayed are refused with the
// reason, and the upstream (the real filesystem server) never runs; the honest answer through the
// same proxy runs the call. Answers signed in batches are respliced too: a statement moved between
// the answers of one batch, and the path or root of another batch.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVER_BUILT } from "../server/server-processes.js";
import { connectGateway, filesUpstream, issueGrant, startWorld, textOf, writeConfig, type World } from "./harness.js";

type Forgery =
  | "none"
  | "unsigned-allow"
  | "other-path"
  | "stripped"
  | "replayed"
  | "batch-mate"
  | "path-of-another-batch"
  | "root-of-another-batch";

type Json = Record<string, unknown> & { signature: Record<string, unknown> };

/** Posts `text` to the real server as `headers` say; answers the answer's text. */
function forward(target: URL, url: string, method: string, headers: Record<string, unknown>, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const onward = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method,
        path: url,
        headers: { ...headers, host: target.host, "content-length": String(Buffer.byteLength(text)) },
      },
      (answer) => {
        const parts: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => parts.push(chunk));
        answer.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
      },
    );
    onward.on("error", reject);
    onward.end(text);
  });
}

/**
 * The batch-mate forgery (decision 1901): the gateway's request goes to the server together with
 * copies of it under other nonces, which the group commit may sign in the same batch. When one
 * is, the gateway gets its own answer (its path, root and signature) carrying the mate's
 * statement, a statement moved between the answers of one batch. Batches of two or more are kept
 * for the forgeries from another batch.
 */
async function batchMate(target: URL, url: string, headers: Record<string, unknown>, text: string, state: ProxyState): Promise<string> {
  const copies = Array.from({ length: 7 }, (_, i) => JSON.stringify({ ...JSON.parse(text), nonce: `batch-mate-copy-${Date.now()}-${i}` }));
  // The copies are requests of their own: not under the gateway's idempotency key, if it sent one.
  const { "idempotency-key": _key, ...copyHeaders } = headers;
  const answers = (
    await Promise.all([text, ...copies].map((body, i) => forward(target, url, "POST", i === 0 ? headers : copyHeaders, body)))
  ).map((answer) => JSON.parse(answer) as Json);
  if (answers.some((answer) => answer.signature === undefined))
    throw new Error(`an answer without a signature: ${JSON.stringify(answers)}`);
  const byRoot = new Map<unknown, Json[]>();
  for (const answer of answers) byRoot.set(answer.signature.root, [...(byRoot.get(answer.signature.root) ?? []), answer]);
  for (const batch of byRoot.values()) if (batch.length >= 2) state.batches.push(batch);
  const mine = answers[0]!;
  const mate = answers.slice(1).find((answer) => answer.signature.root === mine.signature.root);
  state.swapped = mate !== undefined;
  return JSON.stringify(mate === undefined ? mine : { ...mine, signature: { ...mine.signature, statement: mate.signature.statement } });
}

/** What the proxy keeps between calls: batches it saw, and whether the last batch-mate forgery found a mate. */
interface ProxyState {
  batches: Json[][];
  swapped: boolean;
}

/** The gateway's own answer under the batch members of another batch's answer. */
function fromAnotherBatch(body: string, mode: Forgery, state: ProxyState): string {
  const mine = JSON.parse(body) as Json;
  const donor = state.batches.find((batch) => batch.every((answer) => answer.signature.root !== mine.signature.root))![1]!.signature;
  const moved =
    mode === "path-of-another-batch"
      ? { tree_size: donor.tree_size, leaf_index: donor.leaf_index, path: donor.path }
      : { tree_size: donor.tree_size, leaf_index: donor.leaf_index, path: donor.path, root: donor.root, value: donor.value };
  return JSON.stringify({ ...mine, signature: { ...mine.signature, ...moved } });
}

/** Forwards to the real server; on authorize, forges as `mode` says. */
async function forgingProxy(
  upstream: string,
  mode: () => Forgery,
): Promise<{ baseUrl: string; state: ProxyState; close(): Promise<void> }> {
  const target = new URL(upstream);
  let honest: string | undefined;
  const state: ProxyState = { batches: [], swapped: false };
  const proxy: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", async () => {
      let text = Buffer.concat(chunks).toString("utf8");
      const authorize = incoming.url?.endsWith("/authorize") === true;
      if (authorize && mode() === "batch-mate") {
        const forged = await batchMate(target, incoming.url!, incoming.headers, text, state);
        outgoing.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(forged) });
        outgoing.end(forged);
        return;
      }
      if (authorize && mode() === "unsigned-allow") {
        const forged = JSON.stringify({
          outcome: "allow",
          ledger_id: "led_forged",
          gates: [],
          reason: "trust me",
          decided_at: new Date().toISOString(),
        });
        outgoing.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(forged) });
        outgoing.end(forged);
        return;
      }
      if (authorize && mode() === "replayed" && honest !== undefined) {
        outgoing.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(honest) });
        outgoing.end(honest);
        return;
      }
      // The server is asked about another file than the one the gateway will write.
      if (authorize && mode() === "other-path") text = JSON.stringify({ ...JSON.parse(text), args: { path: "/elsewhere.txt" } });
      const onward = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: incoming.method,
          path: incoming.url,
          headers: { ...incoming.headers, host: target.host, "content-length": String(Buffer.byteLength(text)) },
        },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on("data", (chunk: Buffer) => parts.push(chunk));
          answer.on("end", () => {
            let body = Buffer.concat(parts).toString("utf8");
            if (authorize && mode() === "none") honest = body;
            if (authorize && (mode() === "path-of-another-batch" || mode() === "root-of-another-batch"))
              body = fromAnotherBatch(body, mode(), state);
            if (authorize && mode() === "stripped") {
              const { signature: _dropped, ...unsigned } = JSON.parse(body) as Record<string, unknown>;
              body = JSON.stringify(unsigned);
            }
            const headers = { ...answer.headers, "content-length": String(Buffer.byteLength(body)) };
            outgoing.writeHead(answer.statusCode ?? 502, headers);
            outgoing.end(body);
          });
        },
      );
      onward.end(text);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}

describe.skipIf(!SERVER_BUILT)("MCP gateway verifying signed decisions", () => {
  let world: World;
  let mode: Forgery = "none";
  let proxy: Awaited<ReturnType<typeof forgingProxy>>;
  beforeAll(async () => {
    world = await startWorld("verifying-gateway");
    proxy = await forgingProxy(world.server.baseUrl, () => mode);
  });
  afterAll(async () => {
    await proxy?.close();
    await world?.dispose();
  });

  for (const [keys, line] of [
    ["pinned keys", "  signing_keys: keys.json\n"],
    ["no signing configuration at all", ""],
  ] as const) {
    it(`with ${keys}: runs the honest call and refuses every forged answer, forwarding nothing`, async () => {
      const grantId = await issueGrant(world, { scope: { tool: ["files.write_file"] }, enforcement_mode: "observe" });
      writeFileSync(join(world.dir, "keys.json"), await (await fetch(`${world.server.baseUrl}/signing-keys`)).text());
      const config = writeConfig(
        { ...world, server: { ...world.server, baseUrl: proxy.baseUrl } },
        grantId,
        `upstreams:\n${filesUpstream(world)}tools:\n  files.write_file:\n    args: [path]\n`,
        `gateway-${line === "" ? "default" : "pinned"}.yaml`,
      );
      writeFileSync(config, readFileSync(config, "utf8").replace("  attempts: 1\n", `  attempts: 1\n${line}`));
      const gateway = await connectGateway(world, config);
      try {
        mode = "none";
        const honest = join(world.files, `honest-${line.length}.txt`);
        const ran = await gateway.client.callTool({ name: "write_file", arguments: { path: honest, content: "ok" } });
        expect(ran.isError, textOf(ran)).toBeFalsy();
        expect(readFileSync(honest, "utf8")).toBe("ok");
        for (const [forgery, reason] of [
          ["unsigned-allow", /unverified_answer\).*unsigned/],
          ["other-path", /unverified_answer\).*mismatch/],
          ["stripped", /unverified_answer\).*unsigned/],
          ["replayed", /unverified_answer\)/],
        ] as const) {
          mode = forgery;
          const path = join(world.files, `${forgery}-${line.length}.txt`);
          const refused = await gateway.client.callTool({ name: "write_file", arguments: { path, content: "forged" } });
          expect(refused.isError, forgery).toBe(true);
          expect(textOf(refused), forgery).toMatch(reason);
          expect(existsSync(path), forgery).toBe(false);
        }
        // Answers signed in batches (decision 1901), respliced: a statement moved within its batch
        // (tried until the server signs the gateway's request with a copy of it), then the path,
        // and the root with its signature, of another batch.
        mode = "batch-mate";
        for (let attempt = 0; attempt < 20; attempt += 1) {
          const path = join(world.files, `batch-mate-${line.length}-${attempt}.txt`);
          const called = await gateway.client.callTool({ name: "write_file", arguments: { path, content: "moved" } });
          if (!proxy.state.swapped) continue;
          expect(called.isError).toBe(true);
          expect(textOf(called)).toMatch(/unverified_answer\).*bad_signature/);
          expect(existsSync(path)).toBe(false);
          break;
        }
        expect(proxy.state.swapped).toBe(true);
        for (const forgery of ["path-of-another-batch", "root-of-another-batch"] as const) {
          mode = forgery;
          const path = join(world.files, `${forgery}-${line.length}.txt`);
          const refused = await gateway.client.callTool({ name: "write_file", arguments: { path, content: "forged" } });
          expect(refused.isError, forgery).toBe(true);
          expect(textOf(refused), forgery).toMatch(/unverified_answer\).*bad_signature/);
          expect(existsSync(path), forgery).toBe(false);
        }
      } finally {
        await gateway.close();
      }
    });
  }

  it("does not start with a signing_keys file that is no JWKS, saying why", async () => {
    const grantId = await issueGrant(world, { scope: { tool: ["files.write_file"] }, enforcement_mode: "observe" });
    writeFileSync(join(world.dir, "not-keys.json"), '{"keys": 1}');
    const config = writeConfig(world, grantId, `upstreams:\n${filesUpstream(world)}`, "bad-keys.yaml");
    writeFileSync(config, readFileSync(config, "utf8").replace("  attempts: 1\n", "  attempts: 1\n  signing_keys: not-keys.json\n"));
    await expect(connectGateway(world, config)).rejects.toThrow(/signingKeys must be a JWKS/);
  });
});
