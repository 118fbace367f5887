// Hostile parameter patterns over HTTP: the server refuses them with a 422 naming the field, matches
// on the linear-time engine at define and instantiate time, and keeps answering /v1/health meanwhile.
import { FAMILY_LIMITS } from "@agent-authority/families";
import { afterAll, beforeAll, expect, it } from "vitest";
import { expectProblem, startTestServer, type Reply, type TestServer } from "./http-harness.js";
import { forEachStore, type StoreTarget } from "./targets.js";

/** A family body written by hand, as a client may send it, with one string parameter `code`. */
function body(name: string, code: Record<string, unknown>): Record<string, unknown> {
  return {
    id: name,
    version: 1,
    reviewed_by: ["reviewer@example.com"],
    parameters: { code: { type: "string", ...code } },
    grant: {
      agent_id: "agt_nwj47tan9zt24mnpzx45hy43kw",
      principal_type: "team",
      principal_id: "${code}",
      scope: { tool: ["payments.send"] },
    },
  };
}

/** Sends `request` and, while it runs, health checks one after another; answers all of them. */
async function withHealth(t: TestServer, request: Promise<Reply>): Promise<{ reply: Reply; health: Reply[] }> {
  const health: Reply[] = [];
  let done = false;
  const answered = request.finally(() => {
    done = true;
  });
  const probes = (async () => {
    do health.push(await t.call("GET", "/health"));
    while (!done && health.length < 50);
  })();
  const [reply] = await Promise.all([answered, probes]);
  return { reply, health };
}

function suite(target: StoreTarget): void {
  let t: TestServer;
  let issuer: string;
  beforeAll(async () => {
    t = await startTestServer(target);
    issuer = await t.key("issuer@example.com", ["issuer"]);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("a family with `(a+)+$` and a hostile example is refused (422) while /v1/health keeps answering", async () => {
    const hostile = body("redos", { pattern: "(a+)+$", example: `${"a".repeat(40)}!` });
    const { reply, health } = await withHealth(t, t.call("POST", "/grant-families", { key: issuer, body: hostile }));
    expectProblem(reply, 422, "invalid_family");
    expect(reply.body.diagnostics[0]).toMatchObject({
      code: "parameter-bounds",
      message: expect.stringContaining("does not match `(a+)+$`"),
    });
    expect(health.length).toBeGreaterThan(0);
    for (const h of health) expect(h.status).toBe(200);
  });

  it("a pattern outside RE2 is refused with a 422 naming the field, at its line and column in the sent text", async () => {
    for (const pattern of ["(?=a)a", "(a)\\1", "a{1001}", ".{0,1000}.{0,1000}", `${"a".repeat(FAMILY_LIMITS.patternCharsMax - 3)}(?!`]) {
      const reply = await t.call("POST", "/grant-families", { key: issuer, body: body("lookahead", { pattern, example: "a" }) });
      expectProblem(reply, 422, "invalid_family");
      const diagnostic = reply.body.diagnostics.find((d: { code: string }) => d.code === "parameter-pattern");
      expect(diagnostic, pattern).toMatchObject({ field: "parameters.code.pattern", line: expect.any(Number), column: expect.any(Number) });
      expect(reply.body.detail).toContain("parameter `code`");
    }
    const tooLong = await t.call("POST", "/grant-families", {
      key: issuer,
      body: body("long", { pattern: "a".repeat(FAMILY_LIMITS.patternCharsMax + 1), example: "a" }),
    });
    expect(tooLong.status).toBe(400);
  });

  it("instantiation matches a hostile value on the linear-time engine: refused at once, health answering", async () => {
    const pushed = await t.call("POST", "/grant-families", { key: issuer, body: body("nested", { pattern: "(a|aa)+", example: "aa" }) });
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(201);
    const value = `${"a".repeat(FAMILY_LIMITS.stringParameterCharsMax - 1)}!`;
    const { reply, health } = await withHealth(
      t,
      t.call("POST", `/grant-families/${pushed.body.id}/instantiate`, { key: issuer, body: { parameters: { code: value } } }),
    );
    expectProblem(reply, 422, "family_parameters_invalid");
    expect(reply.body.problems).toEqual([expect.objectContaining({ parameter: "code", code: "parameter-bounds" })]);
    for (const h of health) expect(h.status).toBe(200);
  });
}

forEachStore("hostile parameter patterns over HTTP", suite);
