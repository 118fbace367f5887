// The client address in the request log: the peer's own, or the one a trusted proxy forwarded; a
// forged or garbled X-Forwarded-For never reaches the log.

import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clientAddress, ConfigError, FORWARDED_FOR_LIMITS, loadConfig } from "@agent-authority/server";

/** A request as node:http gives it, reduced to the two members read: the socket's peer and the headers. */
function from(peer: string, forwardedFor?: string | string[]): IncomingMessage {
  return {
    socket: { remoteAddress: peer },
    headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor },
  } as unknown as IncomingMessage;
}

const proxies = new Set(["127.0.0.1", "10.0.0.2"]);

describe("clientAddress", () => {
  it("logs the peer when it is no trusted proxy, whatever it claims", () => {
    expect(clientAddress(from("198.51.100.4", "203.0.113.9"), proxies)).toBe("198.51.100.4");
    expect(clientAddress(from("::ffff:198.51.100.4"), proxies)).toBe("198.51.100.4");
  });

  it("behind trusted proxies, logs the first address from the right that is no proxy", () => {
    expect(clientAddress(from("127.0.0.1", "203.0.113.9"), proxies)).toBe("203.0.113.9");
    expect(clientAddress(from("::ffff:127.0.0.1", "6.6.6.6, 203.0.113.9, 10.0.0.2"), proxies)).toBe("203.0.113.9");
    expect(clientAddress(from("127.0.0.1", ["6.6.6.6", "2001:db8::1"]), proxies)).toBe("2001:db8::1");
    expect(clientAddress(from("127.0.0.1"), proxies)).toBe("127.0.0.1");
    expect(clientAddress(from("127.0.0.1", "10.0.0.2"), proxies)).toBe("127.0.0.1");
  });

  it("logs the peer for a garbled header, and for one longer than the limit", () => {
    expect(clientAddress(from("127.0.0.1", "203.0.113.9, <script>"), proxies)).toBe("127.0.0.1");
    expect(clientAddress(from("127.0.0.1", "unknown"), proxies)).toBe("127.0.0.1");
    const long = `${"1.1.1.1, ".repeat(FORWARDED_FOR_LIMITS.headerChars / 9)}203.0.113.9`;
    expect(long.length).toBeGreaterThan(FORWARDED_FOR_LIMITS.headerChars);
    expect(clientAddress(from("127.0.0.1", long), proxies)).toBe("127.0.0.1");
    const edge = `${" ".repeat(FORWARDED_FOR_LIMITS.headerChars - "203.0.113.9".length)}203.0.113.9`;
    expect(clientAddress(from("127.0.0.1", edge), proxies)).toBe("203.0.113.9");
  });

  it("answers an IP address or the peer for any header text (hostile text)", () => {
    const hostile = fc.oneof(
      fc.string({ unit: "binary", maxLength: 200 }),
      fc
        .array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.constantFrom("127.0.0.1", "10.0.0.2", "", " ", "x", "\u0000", "1.2.3.4:80")), {
          maxLength: 8,
        })
        .map((a) => a.join(",")),
    );
    fc.assert(
      fc.property(hostile, (header) => {
        const logged = clientAddress(from("127.0.0.1", header), proxies)!;
        expect(logged === "127.0.0.1" || (isIP(logged) !== 0 && !proxies.has(logged))).toBe(true);
        expect(header.includes(logged) || logged === "127.0.0.1").toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("reads AUTHORITY_TRUSTED_PROXIES and refuses anything but IP addresses", () => {
    expect(loadConfig({}).trustedProxies).toEqual([]);
    expect(loadConfig({ AUTHORITY_TRUSTED_PROXIES: "127.0.0.1, ::1" }).trustedProxies).toEqual(["127.0.0.1", "::1"]);
    expect(() => loadConfig({ AUTHORITY_TRUSTED_PROXIES: "127.0.0.1,proxy.local" })).toThrow(ConfigError);
    expect(() => loadConfig({ AUTHORITY_TRUSTED_PROXIES: "10.0.0.0/8" })).toThrow(/AUTHORITY_TRUSTED_PROXIES/);
  });
});
