// The client's address for the request log: the peer's own, or, when the peer is a trusted proxy
// (AUTHORITY_TRUSTED_PROXIES), the nearest address before it in X-Forwarded-For that is no proxy.

import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";

/** The longest X-Forwarded-For header read; a longer one is ignored and the peer is logged. */
export const FORWARDED_FOR_LIMITS = Object.freeze({ headerChars: 1_024 });

/** An IPv4 address mapped into IPv6 (`::ffff:127.0.0.1`) is written as IPv4. */
function plain(address: string): string {
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/**
 * Only a trusted peer's header is believed, read from its end: each trusted proxy appends the
 * address it received from, so the first untrusted address from the right is the client. Anything
 * that is not an IP address ends the walk with the peer's address: a forged or garbled header
 * never reaches the log.
 */
export function clientAddress(req: IncomingMessage, trusted: ReadonlySet<string>): string | undefined {
  const peer = req.socket.remoteAddress === undefined ? undefined : plain(req.socket.remoteAddress);
  if (peer === undefined || !trusted.has(peer)) return peer;
  const header = req.headers["x-forwarded-for"];
  const text = Array.isArray(header) ? header.join(",") : header;
  if (text === undefined || text.length > FORWARDED_FOR_LIMITS.headerChars) return peer;
  const hops = text.split(",").map((hop) => hop.trim());
  for (let i = hops.length - 1; i >= 0; i -= 1) {
    const hop = hops[i]!;
    if (isIP(hop) === 0) return peer;
    if (!trusted.has(plain(hop))) return plain(hop);
  }
  return peer;
}
