// `file:` resources bounded through the gateway: a policy on `args.uri` with urlWithin (or
// pathWithin over fileUriPath) refuses and seals every escape that a prefix test lets through.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ATTESTATION_BLOCK,
  certify,
  connectGateway,
  decisionsOf,
  issueGrant,
  readyField,
  useWorld,
  writeConfig,
  type Connected,
} from "./harness.js";

const FILE_RESOURCES = join(process.cwd(), "test", "gateway", "fixtures", "file-resources-server.mjs");

describe("file: resources through the gateway", () => {
  const world = useWorld("file-resources-agent");

  /** The escapes of the root: plain `..`, escaped dots, an escaped slash, and the same with a host. */
  const escapes = (root: string): string[] => [
    `file://${root}/../secret.txt`,
    `file://${root}/%2e%2e/secret.txt`,
    `file://${root}/%2E%2E/secret.txt`,
    `file://${root}/..%2fsecret.txt`,
    `file://localhost${root}/..%2Fsecret.txt`,
  ];

  async function open(policy: string, file: string): Promise<{ gateway: Connected; grantId: string }> {
    writeFileSync(join(world().files, "readme.txt"), "inside the root");
    writeFileSync(join(world().dir, "secret.txt"), "SECRET outside the root");
    const grantId = await issueGrant(world(), { scope: { tool: ["resource:files"] }, enforcement_mode: "enforce", policy });
    const upstream = `upstreams:\n  files:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(FILE_RESOURCES)}, ${JSON.stringify(world().files)}]\n`;
    const gateway = await connectGateway(world(), writeConfig(world(), grantId, `${ATTESTATION_BLOCK}${upstream}`, file));
    await certify(world(), await readyField(gateway.stderr, "manifest_hash"));
    return { gateway, grantId };
  }

  it("a prefix test lets the escapes through to a careless server: the attack is real", async () => {
    const root = world().files;
    const { gateway, grantId } = await open(`startsWith(args.uri, "file://${root}/")`, "prefix.yaml");
    try {
      for (const uri of escapes(root).slice(0, 2)) {
        const read = await gateway.client.readResource({ uri });
        expect(JSON.stringify(read.contents)).toContain("SECRET");
      }
      expect((await decisionsOf(world(), grantId)).map((record) => record.outcome)).toEqual(["allow", "allow"]);
    } finally {
      await gateway.close();
    }
  });

  for (const [name, policy] of [
    ["urlWithin", (root: string) => `urlWithin(args.uri, "file://${root}")`],
    ["pathWithin over fileUriPath", (root: string) => `pathWithin(fileUriPath(args.uri), "${root}")`],
  ] as const) {
    it(`${name} refuses and seals every escape, and allows the legitimate read`, async () => {
      const root = world().files;
      const { gateway, grantId } = await open(policy(root), `${name.split(" ")[0]}.yaml`);
      try {
        const legitimate = `file://${root}/readme.txt`;
        expect(JSON.stringify((await gateway.client.readResource({ uri: legitimate })).contents)).toContain("inside the root");
        for (const uri of escapes(root))
          await expect(gateway.client.readResource({ uri }), uri).rejects.toMatchObject({
            code: -32003,
            message: expect.stringContaining("refused: deny"),
          });
        const decisions = await decisionsOf(world(), grantId);
        expect(decisions.map((record) => [record.request.args.uri, record.outcome])).toEqual([
          [legitimate, "allow"],
          ...escapes(root).map((uri) => [uri, "deny"]),
        ]);
        // `..` is read and found outside; the escapes are refused as unreadable, which denies too.
        expect(decisions[1]?.reason_code).not.toBe("policy.error");
        for (const record of decisions.slice(2)) {
          expect(record.reason_code).toBe("policy.error");
          expect(record.reason).toContain("the `file:` URI contains an escaped `.`, `/`");
        }
      } finally {
        await gateway.close();
      }
    });
  }
});
