// docs/mcp-gateway.md: its configuration is valid, and its refusal reads as the gateway writes it.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseGatewayConfig } from "@agent-authority/gateway";
import { SERVER_BUILT } from "../server/server-processes.js";
import { ATTESTATION_BLOCK, certify, connectGateway, issueGrant, useWorld, textOf, writeConfig, readyField } from "./harness.js";

const doc = readFileSync(new URL("../../docs/mcp-gateway.md", import.meta.url), "utf8");
const yamlBlock = /```yaml\n([\s\S]*?)```/.exec(doc)![1]!;
const refusal = /```text\n(refused: [^\n]*)\n```/.exec(doc)![1]!;
/** The five-minute example's policy, as step 2 writes it to `notes.policy`. */
const notesPolicy = /cat > notes\.policy <<'EOF'\n([\s\S]*?)EOF\n/.exec(doc)![1]!;

describe("docs/mcp-gateway.md", () => {
  it("holds a configuration the gateway accepts, and a host snippet that is JSON", () => {
    const parsed = parseGatewayConfig(yamlBlock, "gateway.yaml");
    expect(parsed.ok ? [] : parsed.diagnostics).toEqual([]);
    const host = JSON.parse(/```json\n([\s\S]*?)```/.exec(doc)![1]!);
    expect(host.mcpServers.files.args.slice(1, 3)).toEqual(["gateway", "--config"]);
  });

  describe.skipIf(!SERVER_BUILT)("the five-minute example", () => {
    const world = useWorld("notes-bot");

    it("lists and writes as the page says, refuses a write outside the notes with the text it shows, and lets no escape through", async () => {
      const notes = join(world().files, "notes");
      const grantId = await issueGrant(world(), {
        scope: { tool: ["files.write_file", "files.list_allowed_directories"] },
        enforcement_mode: "enforce",
        policy: notesPolicy.replaceAll("/tmp/agent-files", world().files),
      });
      mkdirSync(notes);
      const upstreams = yamlBlock
        .slice(yamlBlock.indexOf("upstreams:"))
        .replace("node_modules/", join(process.cwd(), "node_modules/"))
        .replace("/tmp/agent-files", world().files);
      const gateway = await connectGateway(world(), writeConfig(world(), grantId, `${ATTESTATION_BLOCK}${upstreams}`));
      try {
        await certify(world(), await readyField(gateway.stderr, "manifest_hash"));
        expect((await gateway.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
          "list_allowed_directories",
          "write_file",
        ]);
        const listed = await gateway.client.callTool({ name: "list_allowed_directories", arguments: {} });
        expect(listed.isError, textOf(listed)).toBeFalsy();
        expect(textOf(listed)).toContain(world().files);
        const allowed = await gateway.client.callTool({ name: "write_file", arguments: { path: join(notes, "hello.md"), content: "hi" } });
        expect(allowed.isError, textOf(allowed)).toBeFalsy();
        expect(readFileSync(join(notes, "hello.md"), "utf8")).toBe("hi");
        const inside = await gateway.client.callTool({
          name: "write_file",
          arguments: { path: `${notes}//sub/./../today.md`, content: "ok" },
        });
        expect(inside.isError, textOf(inside)).toBeFalsy();
        const refused = await gateway.client.callTool({ name: "write_file", arguments: { path: `${notes}/../secret.txt`, content: "no" } });
        const shown = textOf(refused)
          .replace(/grt_\w+/, "grt_…")
          .replace(/led_\w+/, "led_…");
        expect(shown).toBe(refusal);
        const escapes = [
          join(world().files, "secret.txt"),
          `${notes}/..`,
          `${notes}//../secret.txt`,
          `${notes}/./../secret.txt`,
          `${notes}/sub/../../secret.txt`,
          `${notes}/%2e%2e/secret.txt`,
          `${notes}/%2E%2E%2Fsecret.txt`,
          `${notes}/..%2fsecret.txt`,
          `${notes}\\..\\secret.txt`,
          `${notes}-old/secret.txt`,
          "notes/secret.txt",
          "./notes/../secret.txt",
          `${notes}/\u0000/../../secret.txt`,
        ];
        for (const path of escapes) {
          const result = await gateway.client.callTool({ name: "write_file", arguments: { path, content: "escaped" } });
          expect(result.isError, `${path}: ${textOf(result)}`).toBe(true);
          // Refused by the policy gate, or (a NUL) already by the server, which takes no control characters.
          expect(textOf(result), path).toMatch(
            /^refused: (deny by the policy gate \(policy\.(deny|error)\)|`write_file` was not run because the authority server could not decide \(the authority server refused the request \(400)/,
          );
        }
        expect(existsSync(join(world().files, "secret.txt"))).toBe(false);
        expect(readdirSync(world().files).sort()).toEqual(["notes"]);
        expect(readdirSync(notes).sort()).toEqual(["hello.md", "today.md"]);
      } finally {
        await gateway.close();
      }
    });

    it("shows what docs/policy-language.md says of links: one to elsewhere in the server's root is followed, one out of it refused", async () => {
      const root = join(world().files, "links");
      const notes = join(root, "notes");
      mkdirSync(notes, { recursive: true });
      writeFileSync(join(root, "secret.txt"), "secret");
      const outside = mkdtempSync(join(tmpdir(), "outside-"));
      writeFileSync(join(outside, "far.txt"), "far");
      symlinkSync(join(root, "secret.txt"), join(notes, "inside-link.txt"));
      symlinkSync(join(outside, "far.txt"), join(notes, "outside-link.txt"));
      const grantId = await issueGrant(world(), {
        scope: { tool: ["files.read_text_file"] },
        enforcement_mode: "enforce",
        policy: notesPolicy.replaceAll("/tmp/agent-files", root),
      });
      const upstreams = yamlBlock
        .slice(yamlBlock.indexOf("upstreams:"))
        .replace("node_modules/", join(process.cwd(), "node_modules/"))
        .replace("/tmp/agent-files", root);
      const mapped = `${upstreams}  files.read_text_file:\n    args: [path]\n`;
      const gateway = await connectGateway(world(), writeConfig(world(), grantId, `${ATTESTATION_BLOCK}${mapped}`, "links.yaml"));
      try {
        await certify(world(), await readyField(gateway.stderr, "manifest_hash"));
        // The policy sees the text `notes/inside-link.txt`, inside the notes; the server follows the link within its root.
        const inside = await gateway.client.callTool({ name: "read_text_file", arguments: { path: join(notes, "inside-link.txt") } });
        expect(inside.isError, textOf(inside)).toBeFalsy();
        expect(textOf(inside)).toBe("secret");
        const far = await gateway.client.callTool({ name: "read_text_file", arguments: { path: join(notes, "outside-link.txt") } });
        expect(far.isError).toBe(true);
        expect(textOf(far)).toMatch(/denied/i);
      } finally {
        await gateway.close();
        rmSync(outside, { recursive: true, force: true });
      }
    });
  });
});
