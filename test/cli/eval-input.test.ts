// `authority eval` reads its input from a file a user may not have written: hostile names and values are refused.
import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkEnvironment } from "@agent-authority/language";
import { ApiProblem } from "@agent-authority/server";
import { readInput } from "../../cli/src/commands/eval.js";
import { validateBody } from "../../server/src/http/body.js";

const input = {
  amount_minor: 100,
  currency: "EUR",
  tool: "payments.refund",
  agent: "agt_1",
  principal: "ops",
  audience: "api",
  uses: 0,
  spent_minor: 0,
  hour_utc: 12,
  weekday_utc: "mon",
};

const problem = (value: unknown): string | undefined => {
  const found = checkEnvironment(value);
  return "problem" in found ? found.problem : undefined;
};

describe("eval input", () => {
  it("accepts a whole input, and an approver absent, null or a string", () => {
    expect(problem(input)).toBeUndefined();
    expect(problem({ ...input, approver: null })).toBeUndefined();
    expect(problem({ ...input, approver: "cfo@example.com", args: { n: 1 } })).toBeUndefined();
  });

  it("refuses prototype names as unknown names rather than reading through them", () => {
    expect(problem(JSON.parse(`{"__proto__": {"approver": "cfo@example.com"}, ${JSON.stringify(input).slice(1)}`))).toBe(
      "unknown name `__proto__` in the input",
    );
    expect(problem({ ...input, constructor: 1 })).toBe("unknown name `constructor` in the input");
  });

  it("refuses values out of their type or range", () => {
    expect(problem(null)).toBe("the input must be a JSON object of the names a policy reads");
    expect(problem([input])).toBe("the input must be a JSON object of the names a policy reads");
    expect(problem({ ...input, hour_utc: 24 })).toBe("`hour_utc` must be 0 to 23");
    expect(problem({ ...input, hour_utc: 1.5 })).toBe("`hour_utc` must be a whole number, 0 or more");
    expect(problem({ ...input, amount_minor: -1 })).toBe("`amount_minor` must be a whole number, 0 or more");
    expect(problem({ ...input, amount_minor: 2 ** 53 })).toBe("`amount_minor` must be a whole number, 0 or more");
    expect(problem({ ...input, weekday_utc: "Mon" })).toMatch(/^`weekday_utc` must be one of `mon`/);
    expect(problem({ ...input, approver: 1 })).toBe("`approver` must be a string or null (or absent: unknown)");
    expect(problem({ ...input, args: [] })).toBe("`args` must be an object (leave it out for no arguments)");
  });

  it("refuses `args: null` as POST /v1/authorize refuses it, and takes `args` left out as none", () => {
    const action = { grant_id: "grt_01h00000000000000000000000", tool: "payments.refund" };
    const server = (args: unknown) => {
      try {
        validateBody("AuthorizeBody", { ...action, args });
        return "accepted";
      } catch (error) {
        return error instanceof ApiProblem ? error.code : "crashed";
      }
    };
    expect(server(null)).toBe("invalid_body");
    expect(problem({ ...input, args: null })).toBe("`args` must be an object (leave it out for no arguments)");
    expect(server({ n: 1 })).toBe("accepted");
    expect(checkEnvironment(input)).toEqual({ env: { ...input, args: {} } });
  });

  it("reads an input file at its size limit and refuses one a byte over, before reading it", () => {
    const dir = mkdtempSync(join(tmpdir(), "authority-eval-input-"));
    try {
      const text = JSON.stringify(input);
      writeFileSync(join(dir, "at.json"), text);
      writeFileSync(join(dir, "over.json"), `${text} `);
      expect(readInput("at.json", dir, text.length)).toEqual(input);
      expect(() => readInput("over.json", dir, text.length)).toThrow(`\`over.json\` is larger than ${text.length} bytes`);
      expect(() => readInput("missing.json", dir)).toThrow("cannot read `missing.json`");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
