// The policy environment's hour and weekday are computed from epoch milliseconds by arithmetic (no
// Date per decision): they agree with Date's UTC reading at every instant, before 1970 included.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { policyEnvironment } from "@agent-authority/engine";
import { link, request } from "./fixtures.js";

const WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

describe("policyEnvironment", () => {
  it("`hour_utc` and `weekday_utc` are what Date reads in UTC at that instant", () => {
    const grant = link("grt_child", "agt_child");
    fc.assert(
      fc.property(fc.integer({ min: -8_640_000_000_000_000, max: 8_640_000_000_000_000 }), (now) => {
        const env = policyEnvironment(request(), grant, now);
        const date = new Date(now);
        expect([env.hour_utc, env.weekday_utc]).toEqual([date.getUTCHours(), WEEKDAYS[date.getUTCDay()]]);
      }),
      { numRuns: 2000, seed: 20261128 },
    );
    // The edges of a day and of the epoch.
    for (const now of [0, -1, 86_399_999, 86_400_000, -86_400_000, 3_599_999, 3_600_000]) {
      const env = policyEnvironment(request(), grant, now);
      expect(env.hour_utc).toBe(new Date(now).getUTCHours());
      expect(env.weekday_utc).toBe(WEEKDAYS[new Date(now).getUTCDay()]);
    }
  });
});
