// The gateway in its default configuration (no signing keys given: the server's are fetched once)
// behind an attacker on the path: a made-up allow, a real deny flipped to allow, the signature
// stripped, an earlier allow replayed, and the statement re-signed with the attacker's key under its
// own key id and under the server's. Each is refused with the reason and the upstream (the real
// filesystem server) writes nothing; the honest call through the same proxy runs.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVER_BUILT } from "../server/server-processes.js";
import { FORGERIES, startAttackingProxy, type AttackingProxy } from "../sdk/attacks.js";
import {
  ATTESTATION_BLOCK,
  certify,
  connectGateway,
  decisionsOf,
  filesUpstream,
  issueGrant,
  readyField,
  startWorld,
  textOf,
  writeConfig,
  type World,
} from "./harness.js";

describe.skipIf(!SERVER_BUILT)("the gateway's default configuration behind an attacker on the path", () => {
  let world: World;
  let proxy: AttackingProxy;
  beforeAll(async () => {
    world = await startWorld("attacked-gateway");
    proxy = await startAttackingProxy(world.server.baseUrl);
  });
  afterAll(async () => {
    await proxy?.close();
    await world?.dispose();
  });

  it("runs the honest call and refuses every forgery of a denied call, writing nothing", async () => {
    const grantId = await issueGrant(world, {
      scope: { tool: ["files.write_file"] },
      enforcement_mode: "enforce",
      policy: '!endsWith(args.path, "denied.txt")',
    });
    const config = writeConfig(
      { ...world, server: { ...world.server, baseUrl: proxy.baseUrl } },
      grantId,
      `${ATTESTATION_BLOCK}upstreams:\n${filesUpstream(world)}tools:\n  files.write_file:\n    args: [path]\n`,
      "gateway-attacked.yaml",
    );
    const gateway = await connectGateway(world, config);
    try {
      await certify(world, await readyField(gateway.stderr, "manifest_hash"));
      proxy.attack = "none";
      const honest = join(world.files, "honest.txt");
      const ran = await gateway.client.callTool({ name: "write_file", arguments: { path: honest, content: "ok" } });
      expect(ran.isError, textOf(ran)).toBeFalsy();
      expect(readFileSync(honest, "utf8")).toBe("ok");
      expect(proxy.hasRecordedAllow).toBe(true);

      const denied = join(world.files, "plain-denied.txt");
      const refusedHonestly = await gateway.client.callTool({ name: "write_file", arguments: { path: denied, content: "no" } });
      expect(refusedHonestly.isError).toBe(true);
      expect(existsSync(denied)).toBe(false);

      for (const attack of FORGERIES) {
        proxy.attack = attack;
        const path = join(world.files, `${attack}-denied.txt`);
        const refused = await gateway.client.callTool({ name: "write_file", arguments: { path, content: "forged" } });
        expect(refused.isError, attack).toBe(true);
        expect(textOf(refused), attack).toMatch(/unverified_answer/);
        expect(existsSync(path), attack).toBe(false);
      }
      proxy.attack = "none";
      // What the server decided is what the ledger says: one allow, and a deny for each call that reached it.
      const outcomes = (await decisionsOf(world, grantId)).map((record) => record.outcome);
      expect(outcomes[0]).toBe("allow");
      expect(outcomes.slice(1).every((outcome) => outcome === "deny")).toBe(true);
    } finally {
      await gateway.close();
    }
  });

  it("obeys a made-up allow only when its configuration opted out by name (the contrast that shows the refusals above are verification's)", async () => {
    const grantId = await issueGrant(world, { scope: { tool: ["files.write_file"] }, enforcement_mode: "enforce" });
    const config = writeConfig(
      { ...world, server: { ...world.server, baseUrl: proxy.baseUrl } },
      grantId,
      `${ATTESTATION_BLOCK}upstreams:\n${filesUpstream(world)}`,
      "gateway-unsafe.yaml",
    );
    writeFileSync(config, readFileSync(config, "utf8").replace("  attempts: 1\n", "  attempts: 1\n  allow_unsigned_answers: true\n"));
    const gateway = await connectGateway(world, config);
    try {
      proxy.attack = "fabricated";
      const path = join(world.files, "obeyed.txt");
      const ran = await gateway.client.callTool({ name: "write_file", arguments: { path, content: "forged" } });
      expect(ran.isError, textOf(ran)).toBeFalsy();
      expect(readFileSync(path, "utf8")).toBe("forged");
    } finally {
      proxy.attack = "none";
      await gateway.close();
    }
  });
});
