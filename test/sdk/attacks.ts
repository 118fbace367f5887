// An attacker on the path between a client and the real server, with the five forgeries every client
// in its default configuration must refuse: a made-up allow, a deny flipped to allow, a signature
// stripped, an earlier allow replayed, and a statement re-signed with a key of the attacker's (under
// its own key id and under the server's). The SDK, `guard`, each framework adapter and the gateway
// are put behind it; none of them may run a tool on any of these answers.
import { generateKeyPairSync, sign } from "node:crypto";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { canonicalJson } from "@agent-authority/sdk";

/** What the proxy does to the next authorize answer; `none` forwards it and remembers an allow for a later replay. */
export type Attack = "none" | "fabricated" | "flipped" | "stripped" | "replayed" | "attacker-kid" | "attacker-server-kid";

/** Every forgery, for the tests that face them all. */
export const FORGERIES: readonly Exclude<Attack, "none">[] = [
  "fabricated",
  "flipped",
  "stripped",
  "replayed",
  "attacker-kid",
  "attacker-server-kid",
];

export interface AttackingProxy {
  /** The proxy's `/v1` URL, to give a client in place of the server's. */
  readonly baseUrl: string;
  /** The forgery applied to authorize answers from now on. */
  attack: Attack;
  /** Whether an honest allow has been seen, so that `replayed` has something to replay. */
  readonly hasRecordedAllow: boolean;
  close(): Promise<void>;
}

const attackerKey = generateKeyPairSync("ed25519").privateKey;

type Json = Record<string, unknown>;

/** The answer turned into an allow, its statement as well; the signature left as it was. */
function flippedToAllow(answer: Json): Json {
  const signature = answer["signature"] as Json | undefined;
  const statement = (signature?.["statement"] ?? {}) as Json;
  return {
    ...answer,
    outcome: "allow",
    gates: [],
    reason: null,
    ...(signature === undefined ? {} : { signature: { ...signature, statement: { ...statement, outcome: "allow" } } }),
  };
}

/** The real answer rewritten as `attack` says; undefined for an attack that answers without asking the server. */
function forged(attack: Attack, answer: Json): Json {
  switch (attack) {
    case "flipped":
      return flippedToAllow(answer);
    case "stripped": {
      const { signature: _dropped, ...unsigned } = flippedToAllow(answer);
      return unsigned;
    }
    case "attacker-kid":
    case "attacker-server-kid": {
      const allow = flippedToAllow(answer);
      const signature = allow["signature"] as Json;
      const statement = signature["statement"] as Json;
      const kid = attack === "attacker-kid" ? "attacker-key" : signature["kid"];
      const value = sign(null, Buffer.from(canonicalJson(statement), "utf8"), attackerKey).toString("base64url");
      return { ...allow, signature: { ...signature, kid, value } };
    }
    default:
      return answer;
  }
}

function fabricatedAllow(): Json {
  return { outcome: "allow", ledger_id: "led_forged", gates: [], reason: "trust me", decided_at: new Date().toISOString() };
}

/** Starts the proxy in front of `upstream` (a `/v1` URL); it forwards everything else untouched. */
export async function startAttackingProxy(upstream: string): Promise<AttackingProxy> {
  const target = new URL(upstream);
  let recordedAllow: string | undefined;
  const state = { attack: "none" as Attack };
  const answer = (outgoing: import("node:http").ServerResponse, status: number, headers: Json, text: string): void => {
    outgoing.writeHead(status, { "content-type": "application/json", ...headers, "content-length": String(Buffer.byteLength(text)) });
    outgoing.end(text);
  };
  const proxy: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const sent = Buffer.concat(chunks).toString("utf8");
      const authorize = incoming.url?.endsWith("/authorize") === true;
      const attack = authorize ? state.attack : "none";
      if (attack === "fabricated") return answer(outgoing, 200, {}, JSON.stringify(fabricatedAllow()));
      if (attack === "replayed" && recordedAllow !== undefined) return answer(outgoing, 200, {}, recordedAllow);
      const onward = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: incoming.method,
          path: incoming.url,
          headers: { ...incoming.headers, host: target.host, "content-length": String(Buffer.byteLength(sent)) },
        },
        (reply) => {
          const parts: Buffer[] = [];
          reply.on("data", (chunk: Buffer) => parts.push(chunk));
          reply.on("end", () => {
            let text = Buffer.concat(parts).toString("utf8");
            if (authorize && reply.statusCode === 200) {
              const json = JSON.parse(text) as Json;
              if (attack === "none" && json["outcome"] === "allow") recordedAllow = text;
              else if (attack !== "none") text = JSON.stringify(forged(attack, json));
            }
            const { "content-length": _length, ...headers } = reply.headers;
            answer(outgoing, reply.statusCode ?? 502, headers as Json, text);
          });
        },
      );
      onward.on("error", () => answer(outgoing, 502, {}, "{}"));
      onward.end(sent);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${target.pathname.replace(/\/$/, "")}`,
    get attack() {
      return state.attack;
    },
    set attack(value: Attack) {
      state.attack = value;
    },
    get hasRecordedAllow() {
      return recordedAllow !== undefined;
    },
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}
