// Each gate of docs/decisions.md and each of its reasons, on chains without policies.
import { describe, expect, it } from "vitest";
import { decide, GATES, REASONS, type ChainLink, type Decision } from "@agent-authority/engine";
import { certificate, chainOf, HOUR, link, NOW, request, stateFor, T0 } from "./fixtures.js";

function expectDecided(decision: Decision, gate: string, code: string, outcome: string): void {
  expect(decision).toMatchObject({ outcome, decided_by: gate, reason_code: code });
  const index = GATES.indexOf(gate as (typeof GATES)[number]);
  expect(decision.gates.map((g) => g.result)).toEqual(
    GATES.map((_, i) => (i < index ? expect.stringMatching(/pass|skipped/) : i === index ? "fail" : "not_reached")),
  );
  expect(decision.gates[index]).toMatchObject({ gate, code, outcome });
  expect(REASONS[code as keyof typeof REASONS]).toMatchObject({ gate, outcome });
  expect(decision.reason.length).toBeGreaterThan(0);
  expect(decision.holds).toEqual([]);
  expect(decision.counted).toBe(false);
}

describe("decide: every gate passes", () => {
  it("allows, counts the use and places a hold on the grant and every ancestor", () => {
    const decision = decide(request(), chainOf(), stateFor(), NOW);
    expect(decision).toMatchObject({
      outcome: "allow",
      decided_by: null,
      reason_code: "decision.allow",
      counted: true,
      mode: "enforce",
      approver: null,
    });
    expect(decision.would_outcome).toBeUndefined();
    expect(decision.gates.map((g) => [g.gate, g.result, g.code])).toEqual([
      ["grant", "pass", "grant.held"],
      ["status", "pass", "status.active"],
      ["window", "pass", "window.inside"],
      ["audience", "pass", "audience.match"],
      ["certification", "pass", "certification.valid"],
      ["scope", "pass", "scope.covered"],
      ["conditions", "pass", "conditions.met"],
      ["policy", "pass", "policy.allow"],
      ["budget", "pass", "budget.fits"],
    ]);
    expect(decision.holds).toEqual(
      [
        { grant_id: "grt_root", amount_minor: 1_000, currency: "EUR", expires_at: NOW + 24 * HOUR },
        { grant_id: "grt_child", amount_minor: 1_000, currency: "EUR", expires_at: NOW + 24 * HOUR },
      ].map((h) => ({ ...h, expires_at: Math.min(h.expires_at, T0 + 24 * HOUR) })),
    );
  });

  it("lets a hold expire with the grant, or after the configured lifetime if sooner", () => {
    const short = decide(request(), chainOf(), stateFor("agt_child", { hold_lifetime_ms: HOUR }), NOW);
    expect(short.holds.map((h) => h.expires_at)).toEqual([NOW + HOUR, NOW + HOUR]);
    const chain = chainOf({}, { window: { start: T0, end: NOW + 30 * 60_000 } });
    expect(decide(request(), chain, stateFor(), NOW).holds.map((h) => h.expires_at)).toEqual([NOW + 30 * 60_000, NOW + 30 * 60_000]);
  });

  it("places no hold without an amount but still counts the use", () => {
    const decision = decide(request({ amount_minor: null, currency: null }), chainOf(), stateFor(), NOW);
    expect(decision).toMatchObject({ outcome: "allow", counted: true, holds: [] });
  });

  it("is pure: the same arguments give the same decision and nothing is changed", () => {
    const chain = chainOf();
    const before = JSON.stringify(chain);
    expect(decide(request(), chain, stateFor(), NOW)).toEqual(decide(request(), chain, stateFor(), NOW));
    expect(JSON.stringify(chain)).toBe(before);
  });
});

describe("gate 1: grant", () => {
  it("denies a grant the caller does not hold, exactly as one that does not exist", () => {
    const foreign = decide(request({ agent_id: "agt_other" }), chainOf(), stateFor("agt_other"), NOW);
    const unknown = decide(request({ agent_id: "agt_other", grant_id: "grt_child" }), [], stateFor("agt_other"), NOW);
    expectDecided(foreign, "grant", "grant.not_held", "deny");
    expectDecided(unknown, "grant", "grant.not_held", "deny");
    expect(foreign.reason).toBe(unknown.reason);
  });

  it("denies a chain whose last grant is not the requested one", () => {
    expectDecided(decide(request({ grant_id: "grt_root" }), chainOf(), stateFor(), NOW), "grant", "grant.not_held", "deny");
  });

  it("denies a chain longer than the engine decides on", () => {
    const chain = Array.from({ length: 65 }, (_, i) => link(i === 64 ? "grt_child" : `grt_${i}`, i === 64 ? "agt_child" : "agt_root"));
    expectDecided(decide(request(), chain, stateFor(), NOW), "grant", "grant.chain_too_deep", "deny");
  });
});

describe("gate 2: status", () => {
  it("denies when an ancestor is revoked, naming it", () => {
    const chain: ChainLink[] = chainOf();
    chain[0] = { ...chain[0]!, status: "revoked" };
    const decision = decide(request(), chain, stateFor(), NOW);
    expectDecided(decision, "status", "status.revoked", "deny");
    expect(decision.gates[1]!.grant_id).toBe("grt_root");
  });

  it("gates while the grant awaits approval, and revocation wins over a pending approval", () => {
    const chain: ChainLink[] = chainOf();
    chain[1] = { ...chain[1]!, status: "pending_approval" };
    expectDecided(decide(request(), chain, stateFor(), NOW), "status", "status.pending_approval", "gated");
    chain[0] = { ...chain[0]!, status: "revoked" };
    expectDecided(decide(request(), chain, stateFor(), NOW), "status", "status.revoked", "deny");
  });
});

describe("gate 3: window", () => {
  it("denies before the start and at or after the expiry of any link", () => {
    expectDecided(
      decide(request(), chainOf({}, { window: { start: NOW + 1, end: NOW + HOUR } }), stateFor(), NOW),
      "window",
      "window.not_yet_valid",
      "deny",
    );
    expectDecided(decide(request(), chainOf({ window: { start: T0, end: NOW } }), stateFor(), NOW), "window", "window.expired", "deny");
    expect(
      decide(request(), chainOf({ window: { start: NOW, end: NOW + 1 } }, { window: { start: NOW, end: NOW + 1 } }), stateFor(), NOW)
        .outcome,
    ).toBe("allow");
  });
});

describe("gate 4: audience", () => {
  it("denies a request without the chain's audience or with another one", () => {
    expectDecided(decide(request({ audience: null }), chainOf(), stateFor(), NOW), "audience", "audience.missing", "deny");
    expectDecided(decide(request({ audience: "evil.example.com" }), chainOf(), stateFor(), NOW), "audience", "audience.mismatch", "deny");
  });

  it("compares by equality: a chain that names no audience serves only requests that name none", () => {
    const chain = chainOf({ audience: null }, { audience: null });
    expectDecided(decide(request({ audience: "x" }), chain, stateFor(), NOW), "audience", "audience.mismatch", "deny");
    expect(decide(request({ audience: null }), chain, stateFor(), NOW).outcome).toBe("allow");
  });
});

describe("gate 5: certification", () => {
  it("denies in enforce without a certificate for this environment", () => {
    expectDecided(
      decide(request(), chainOf(), stateFor("agt_child", { certificate: null }), NOW),
      "certification",
      "certification.missing",
      "deny",
    );
    const elsewhere = { environment: "production", certificate: certificate("agt_child", { environment: "staging" }) };
    expectDecided(decide(request(), chainOf(), elsewhere, NOW), "certification", "certification.missing", "deny");
    const someoneElse = { environment: "production", certificate: certificate("agt_root") };
    expectDecided(decide(request(), chainOf(), someoneElse, NOW), "certification", "certification.missing", "deny");
  });

  it("denies with a revoked certificate", () => {
    const revoked = { environment: "production", certificate: certificate("agt_child", { revoked_at: T0 }) };
    expectDecided(decide(request(), chainOf(), revoked, NOW), "certification", "certification.revoked", "deny");
  });

  it("denies without an attestation, and when any attested field differs, naming each", () => {
    expectDecided(
      decide(request({ attestation: null }), chainOf(), stateFor(), NOW),
      "certification",
      "certification.attestation_missing",
      "deny",
    );
    const swapped = decide(
      request({ attestation: { manifest_hash: "sha256:m2", content_hash: "sha256:c1", provenance_version: "model-2026-02" } }),
      chainOf(),
      stateFor(),
      NOW,
    );
    expectDecided(swapped, "certification", "certification.attestation_mismatch", "deny");
    expect(swapped.reason).toContain("`manifest_hash`");
    expect(swapped.reason).toContain("`provenance_version`");
    expect(swapped.reason).not.toContain("`content_hash`");
  });

  it("is skipped in observe", () => {
    const chain = chainOf({ enforcement_mode: "observe" }, { enforcement_mode: "observe" });
    const decision = decide(request(), chain, stateFor("agt_child", { certificate: null }), NOW);
    expect(decision.gates[4]).toMatchObject({ result: "skipped", code: "certification.not_required" });
    expect(decision).toMatchObject({ outcome: "allow", would_outcome: "allow" });
  });
});

describe("gate 6: scope", () => {
  it("denies a tool outside the scope of any link, naming the link", () => {
    const chain = chainOf({}, { scope: { tool: ["payments.refund"] } });
    const decision = decide(request(), chain, stateFor(), NOW);
    expectDecided(decision, "scope", "scope.out_of_scope", "deny");
    expect(decision.gates[5]!.grant_id).toBe("grt_child");
    expect(decision.reason).toContain("`payments.send`");
  });

  it("denies a tool name no scope can hold, even under a pattern whose prefix starts it", () => {
    const chain = chainOf({ scope: { tool: ["payments.*"] } }, { scope: { tool: ["payments.*"] } });
    for (const tool of ["payments.\u0435cho", "payments./../send", "payments.a b"]) {
      const decision = decide(request({ tool }), chain, stateFor(), NOW);
      expectDecided(decision, "scope", "scope.out_of_scope", "deny");
      expect(decision.reason).toContain("is not a name a scope can hold");
    }
  });

  it("checks the ancestors too, whatever the child's scope says", () => {
    const chain = chainOf({ scope: { tool: ["mail.send"] } }, { scope: { tool: ["payments.*"] } });
    expect(decide(request(), chain, stateFor(), NOW).gates[5]!.grant_id).toBe("grt_root");
  });
});

describe("gate 7: conditions", () => {
  it("denies when a link requires a clean context and the request is not marked clean", () => {
    const chain = chainOf({ conditions: { clean_context: true } }, { conditions: { clean_context: true } });
    for (const context of [null, {}, { clean: false }, { clean: null }]) {
      expectDecided(decide(request({ context }), chain, stateFor(), NOW), "conditions", "conditions.clean_context_required", "deny");
    }
    expect(decide(request({ context: { clean: true } }), chain, stateFor(), NOW).outcome).toBe("allow");
  });
});

describe("gate 9: budget", () => {
  it("answers exhausted when the amount exceeds what is left on any link", () => {
    const chain = chainOf();
    const spent: ChainLink = { ...chain[0]!, usage: { uses: 0, settled_minor: 9_500, holds: [] } };
    const decision = decide(request(), [spent, chain[1]!], stateFor(), NOW);
    expectDecided(decision, "budget", "budget.amount_exhausted", "exhausted");
    expect(decision.reason).toContain("`500` left");
  });

  it("counts live holds and ignores expired ones, without a sweeper", () => {
    const chain = chainOf();
    const held = (expires_at: number): ChainLink => ({
      ...chain[1]!,
      usage: { uses: 0, settled_minor: 0, holds: [{ amount_minor: 9_500, expires_at }] },
    });
    expect(decide(request(), [chain[0]!, held(NOW + 1)], stateFor(), NOW).outcome).toBe("exhausted");
    expect(decide(request(), [chain[0]!, held(NOW)], stateFor(), NOW).outcome).toBe("allow");
  });

  it("answers exhausted when a link has no use left", () => {
    const chain = chainOf();
    const used: ChainLink = { ...chain[0]!, usage: { uses: 10, settled_minor: 0, holds: [] } };
    expectDecided(decide(request(), [used, chain[1]!], stateFor(), NOW), "budget", "budget.count_exhausted", "exhausted");
    expect(decide(request(), chainOf({ budget_count: null }, { budget_count: null }), stateFor(), NOW).outcome).toBe("allow");
  });

  it("denies an amount in another currency, or without one", () => {
    expectDecided(decide(request({ currency: "USD" }), chainOf(), stateFor(), NOW), "budget", "budget.currency_mismatch", "deny");
    expectDecided(decide(request({ currency: null }), chainOf(), stateFor(), NOW), "budget", "budget.currency_mismatch", "deny");
  });

  it("denies an amount that is not a non-negative integer", () => {
    for (const amount_minor of [-1, 1.5, Number.NaN, 2 ** 60]) {
      expectDecided(decide(request({ amount_minor }), chainOf(), stateFor(), NOW), "budget", "budget.invalid_amount", "deny");
    }
  });

  it("lets a grant without an amount budget act without spending", () => {
    const chain = chainOf({ budget_amount_minor: 0 }, { budget_amount_minor: 0 });
    expect(decide(request({ amount_minor: 0 }), chain, stateFor(), NOW).outcome).toBe("allow");
    expect(decide(request({ amount_minor: 1 }), chain, stateFor(), NOW).outcome).toBe("exhausted");
  });
});

describe("observe", () => {
  const observed = (): ChainLink[] => chainOf({ enforcement_mode: "observe" }, { enforcement_mode: "observe" });

  it("never refuses on the grant's terms, and says what enforce would have said", () => {
    const decision = decide(request({ tool: "mail.read" }), observed(), stateFor(), NOW);
    expect(decision).toMatchObject({
      outcome: "allow",
      would_outcome: "deny",
      decided_by: "scope",
      reason_code: "scope.out_of_scope",
      mode: "observe",
    });
    expect(decision.reason).toMatch(/^in `observe`: enforce would answer `deny`/);
    expect(decision).toMatchObject({ counted: false, holds: [] });
  });

  it("counts usage exactly as enforce would, so a promotion is realistic", () => {
    const decision = decide(request(), observed(), stateFor(), NOW);
    expect(decision).toMatchObject({ outcome: "allow", would_outcome: "allow", counted: true });
    expect(decision.holds).toHaveLength(2);
    const spent = observed().map((l) => ({ ...l, usage: { uses: 0, settled_minor: 10_000, holds: [] } }));
    expect(decide(request(), spent, stateFor(), NOW)).toMatchObject({
      outcome: "allow",
      would_outcome: "exhausted",
      counted: false,
      holds: [],
    });
  });

  it("still refuses a grant that is not usable at all: not held, revoked, pending or outside its window", () => {
    const chain = observed();
    expect(decide(request({ agent_id: "agt_x" }), chain, stateFor(), NOW).outcome).toBe("deny");
    expect(decide(request(), [chain[0]!, { ...chain[1]!, status: "revoked" }], stateFor(), NOW).outcome).toBe("deny");
    expect(decide(request(), [chain[0]!, { ...chain[1]!, status: "pending_approval" }], stateFor(), NOW).outcome).toBe("gated");
    expect(decide(request(), chain, stateFor(), T0 + 48 * HOUR)).toMatchObject({ outcome: "deny", decided_by: "window" });
    expect(decide(request(), chain, stateFor(), T0 + 48 * HOUR).would_outcome).toBeUndefined();
  });

  it("decides in the strictest mode on the chain", () => {
    const decision = decide(
      request({ tool: "mail.read" }),
      chainOf({ enforcement_mode: "enforce" }, { enforcement_mode: "observe" }),
      stateFor(),
      NOW,
    );
    expect(decision).toMatchObject({ mode: "enforce", outcome: "deny" });
  });
});

describe("reasons", () => {
  it("each gate's result is its own: named in the order of GATES, with a code of that gate", () => {
    const decisions = [
      decide(request(), chainOf(), stateFor(), NOW),
      decide(request(), chainOf({ enforcement_mode: "observe" }, { enforcement_mode: "observe" }), stateFor(), NOW),
    ];
    for (const decision of decisions) {
      expect(decision.gates.map((g) => g.gate)).toEqual([...GATES]);
      for (const g of decision.gates) expect(REASONS[g.code as keyof typeof REASONS], g.code).toMatchObject({ gate: g.gate });
    }
  });

  it("every code in the catalogue names a gate and uses the `gate.` prefix of its gate", () => {
    for (const [code, entry] of Object.entries(REASONS)) {
      if (entry.gate === null) continue;
      const prefix = code.split(".")[0]!;
      expect(prefix === entry.gate || (prefix === "approval" && entry.gate === "policy")).toBe(true);
    }
  });
});
