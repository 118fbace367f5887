// A real authority server for the framework adapters' tests: a certified agent, its key, an approver, and grants in enforce.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuthorityClient, type Attestation, type Grant, type GrantIssueBody, type LedgerRecord } from "@agent-authority/sdk";
import { loadConfig, startServer, type AuthorityServer } from "@agent-authority/server";

const adminKey = "aa_frameworks_suite_admin_0123456789abcdef";

/** What the agent presents on every decision; the certificate pins the same. */
export const ATTESTATION: Attestation = Object.freeze({
  manifest_hash: "sha256:1111111111111111111111111111111111111111111111111111111111111111",
  content_hash: "sha256:2222222222222222222222222222222222222222222222222222222222222222",
  provenance_version: "model-2026-11",
});

/**
 * The policy of every grant here: an order named `blocked` is denied, and an amount above 1000
 * needs the CFO's approval.
 */
export const POLICY = 'args.order != "blocked" && (amount_minor <= 1000 || approver in ["cfo@example.com"])';

export interface Platform {
  readonly server: AuthorityServer;
  readonly baseUrl: string;
  readonly admin: AuthorityClient;
  /** The agent's own client, with its attestation. */
  readonly agent: AuthorityClient;
  /** The agent's key, for a client of the reader's own making (the docs' examples). */
  readonly agentKey: string;
  /** A human approver, `cfo@example.com`. */
  readonly approver: AuthorityClient;
  /** A fresh grant in enforce over `shop.*`, 50,000 EUR and 1,000 uses. */
  grant(extra?: Partial<GrantIssueBody>): Promise<Grant>;
  /** The sealed records of a grant's tree, decisions and settlements. */
  ledger(grantId: string): Promise<readonly LedgerRecord[]>;
  close(): Promise<void>;
}

export async function startPlatform(): Promise<Platform> {
  const dataDir = mkdtempSync(join(tmpdir(), "authority-frameworks-"));
  const server = await startServer(
    loadConfig(
      {
        AUTHORITY_PORT: "0",
        AUTHORITY_DATA_DIR: dataDir,
        AUTHORITY_ADMIN_KEY: adminKey,
        AUTHORITY_AUTO_APPROVAL_CEILING_MINOR: "1000000",
        AUTHORITY_LOG_LEVEL: "silent",
      },
      dataDir,
    ),
  );
  const client = (apiKey: string, attestation?: Attestation): AuthorityClient =>
    new AuthorityClient({
      baseUrl: server.baseUrl,
      apiKey,
      timeoutMs: 5_000,
      attempts: 2,
      retryDelayMs: 20,
      ...(attestation === undefined ? {} : { attestation }),
    });
  const admin = client(adminKey);
  const key = async (
    identity: string,
    kind: "human" | "service",
    roles: ("issuer" | "certifier" | "approver" | "agent")[],
    agentId?: string,
  ): Promise<string> => (await admin.keys.create({ identity, kind, roles, ...(agentId === undefined ? {} : { agent_id: agentId }) })).key;
  const issuer = client(await key("issuer-bot", "service", ["issuer"]));
  const certifier = client(await key("cert@example.com", "human", ["certifier"]));
  const approver = client(await key("cfo@example.com", "human", ["approver"]));
  const agentId = (await issuer.agents.register({ name: "shop-bot" })).id;
  await certifier.agents.certify(agentId, { basis: "framework adapters suite", checks: ["tools reviewed"], ...ATTESTATION });
  const agentKey = await key("shop-bot", "service", ["agent"], agentId);
  return {
    server,
    baseUrl: server.baseUrl,
    admin,
    agentKey,
    approver,
    agent: client(agentKey, ATTESTATION),
    grant: async (extra = {}) => {
      const grant = await issuer.grants.issue({
        agent_id: agentId,
        principal_type: "human",
        principal_id: "ops@example.com",
        scope: { tool: ["shop.*"] },
        budget_amount_minor: 50_000,
        budget_currency: "EUR",
        budget_count: 1_000,
        enforcement_mode: "observe",
        policy: POLICY,
        ...extra,
      });
      return issuer.grants.enforcement(grant.id, { enforcement_mode: "enforce" });
    },
    ledger: async (grantId) => (await admin.ledger.tree(grantId)).records,
    close: async () => {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
