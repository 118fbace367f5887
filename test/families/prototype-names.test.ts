// Issue 23, finding 3: parameter names and placeholders that Object.prototype also answers to are
// read as the family's own, never inherited.
import { resolveParameters, substituteGrant, substituteText } from "@agent-authority/families";
import { describe, expect, it } from "vitest";

describe("placeholders and parameters named like Object.prototype", () => {
  it("leaves a placeholder with no parameter of its own unsubstituted", () => {
    const text = "tool == ${__proto__} || tool == ${constructor} || tool == ${tostring}";
    expect(substituteText(text, { team: "ops" }, "policy").text).toBe(text);
    expect(substituteText("x-${constructor}", {}, "text").text).toBe("x-${constructor}");
  });

  it("substitutes a parameter really named `constructor`", () => {
    const values = resolveParameters({ constructor: { type: "int" as const, default: 3 } }, {});
    expect(values).toEqual({ ok: true, values: { constructor: 3 } });
    if (values.ok) expect(substituteText("uses < ${constructor}", values.values, "policy").text).toBe("uses < 3");
  });

  it("keeps a template key `__proto__` an own field, so validation sees it and nothing is inherited", () => {
    const template = JSON.parse('{"__proto__": {"policy": "true"}, "audience": "${constructor}"}') as unknown;
    const grant = substituteGrant(template, {}) as Record<string, unknown>;
    expect(Object.getPrototypeOf(grant)).toBe(Object.prototype);
    expect(Object.keys(grant)).toEqual(["__proto__", "audience"]);
    expect(grant["policy"]).toBeUndefined();
    expect(grant["audience"]).toBe("${constructor}");
  });

  it("refuses a given parameter `__proto__` as unknown, and sets no prototype", () => {
    const given = JSON.parse('{"__proto__": {"team": "sales"}}') as Record<string, unknown>;
    const result = resolveParameters({ team: { type: "string", default: "ops" } }, given);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.map((p) => [p.code, p.parameter])).toEqual([["parameter-unknown", "__proto__"]]);
  });
});
