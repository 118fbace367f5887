// Every request body schema compiles under the server's own validator settings (strict mode): a
// schema that only compiles when its endpoint is first called would answer that call with a 500.

import { ENDPOINTS } from "@agent-authority/api";
import { describe, expect, it } from "vitest";
import { validateBody } from "../../server/src/http/body.js";
import { Refusal } from "../../server/src/services/common/index.js";

describe("request body schemas", () => {
  const named = [...new Set(ENDPOINTS.flatMap((e) => (e.body === undefined || e.body === null ? [] : [e.body])))];

  it("there are body schemas to check", () => {
    expect(named.length).toBeGreaterThan(10);
  });

  for (const name of named) {
    it(`${name} compiles, and an empty object is judged (a refusal or a value), never an error of the validator`, () => {
      let outcome: unknown;
      try {
        outcome = validateBody(name, {});
      } catch (error) {
        outcome = error;
      }
      expect(outcome instanceof Refusal || (typeof outcome === "object" && !(outcome instanceof Error)), String(outcome)).toBe(true);
    });
  }
});
