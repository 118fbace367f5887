// Runs the curl commands of docs/walkthrough.md against a real server and checks the answers
// the page shows, so the walkthrough cannot drift from the server.

import { execFile, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./http-harness.js";
import { forEachStore } from "./targets.js";

const doc = readFileSync(new URL("../../docs/walkthrough.md", import.meta.url), "utf8");
const ADMIN = /export ADMIN=(\S+)/.exec(doc)![1]!;
const missing = ["curl", "jq", "bash"].filter((tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0);
if (missing.length > 0) console.error(`\n!!  walkthrough test SKIPPED: ${missing.join(", ")} not installed\n`);

/** Runs a command without blocking this process (whose server answers it), with its exit code. */
function spawnAsync(command: string, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, [...args], { encoding: "utf8", timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr });
    });
  });
}

/** The shell blocks after the one that starts the server, with API pointed at the test server. */
function script(baseUrl: string): string {
  const blocks = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((b) => !b.includes("npm start"));
  return ["set -euo pipefail", ...blocks].join("\n").replace(/^export API=.*$/m, `export API=${baseUrl}`);
}

forEachStore("docs/walkthrough.md", (target) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(target, { adminKey: ADMIN, environment: "development", autoApprovalCeilingMinor: 0 });
  });
  afterAll(async () => {
    await t?.close();
  });

  describe("as written", () => {
    if (missing.length > 0) {
      it.skip(`skipped because ${missing.join(", ")} is not installed`, () => undefined);
      return;
    }
    // Twice on one database: a reader who runs the page again on the same data folder gets the
    // same answers, and a step that fails stops the script with the server's problem on stderr.
    it.each([1, 2])("runs every command and gets the answers the page shows (run %i on one database)", async () => {
      // Asynchronously: the server answering the commands runs in this process.
      const { stdout: out } = await promisify(execFile)("bash", ["-c", script(t.baseUrl)], { encoding: "utf8", timeout: 60_000 });
      for (const line of [
        '{"status":"ok","version":"0.2.0","environment":"development"}',
        '{"identity":"carol@example.com","roles":["certifier"],"status":"active"}',
        "same name, same agent",
        '"code":"certification_required"',
        '"issued_by":"carol@example.com","issued_by_email":"carol@example.com"',
        '"status":"pending_approval","issued_by":"alice@example.com"',
        '{"status":"active","approved_by":"bob@example.com"}',
        '"scope":{"tool":["payments.refund"]},"budget_amount_minor":10000,"budget_count":10',
        '{"status":422,"code":"delegation_widens","axes":["scope.tool","window","budget_amount_minor"]}',
        '{"status":"revoked","revoked_by":"alice@example.com","revocation_reason":"campaign over"}',
        // 12: the decision path.
        '{"outcome":"allow","reason_code":"decision.allow","held":[12000],"ledger":true}',
        '{"outcome":"gated","decided_by":"policy","residual":"approver == \\"bob@example.com\\""}',
        '{"tool":"payments.refund","amount_minor_max":35000,"approver":"bob@example.com"}',
        '{"outcome":"allow","approver":"bob@example.com"}\n{"outcome":"gated"}',
        '{"amount_minor":30000,"released_minor":5000}\nsame settlement\n{"status":409,"code":"already_settled"}',
        '{"uses":2,"held_minor":12000,"settled_minor":30000}',
        'replayed byte for byte\n{"uses":3}',
        '{"ok":true,"broken":null}',
      ])
        expect(out).toContain(line);
      const revoked = JSON.parse(
        out
          .trim()
          .split("\n")
          .find((l) => l.includes('"revoked":['))!,
      );
      expect(revoked.revoked).toHaveLength(2);
    });

    it("has a key() helper that fails with the server's problem instead of handing on a `null` key", async () => {
      const helper = /^key\(\) \{[\s\S]*?^\}$/m.exec(doc)![0];
      const refused = `export ADMIN=${ADMIN} API=${t.baseUrl}\n${helper}\nISSUER=$(key '{"identity":"x","kind":"service","roles":["agent"]}') || { echo "stopped"; exit 3; }\necho "went on with $ISSUER"`;
      const { code, stdout, stderr } = await spawnAsync("bash", ["-c", refused]);
      expect(code).toBe(3);
      expect(stdout).toBe("stopped\n");
      expect(stderr).toContain("no key created:");
      expect(stderr).toContain("invalid_key_request");
    });
  });
});
