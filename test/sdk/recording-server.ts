// A small node:http server on a random port that records what it received, for testing the client's wire behaviour.
import { createHash, generateKeyPairSync, sign } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { canonicalJson, type SigningKeySet } from "@agent-authority/sdk";

export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

export interface RecordingServer {
  readonly baseUrl: string;
  readonly received: ReceivedRequest[];
  close(): Promise<void>;
}

export type Responder = (request: ReceivedRequest, response: ServerResponse, index: number) => void;

/** Starts a server on 127.0.0.1 and a random port; `respond` decides each answer (or never answers). */
export async function startRecordingServer(respond: Responder): Promise<RecordingServer> {
  const received: ReceivedRequest[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const entry: ReceivedRequest = {
        method: request.method ?? "",
        url: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      received.push(entry);
      requestOf.set(response, entry);
      respond(entry, response, received.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A base URL on which nothing listens: a port that was bound and released. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

// These scripted servers sign as the real one does, with a key of their own: a client is given
// TEST_SIGNING_KEYS and keeps verifying, its default, while a test scripts the rest of the answer.
const testKey = generateKeyPairSync("ed25519");

/** The key set of every scripted server, to pin in a client (`signingKeys: TEST_SIGNING_KEYS`). */
export const TEST_SIGNING_KEYS: SigningKeySet = {
  keys: [
    {
      kty: "OKP",
      crv: "Ed25519",
      x: testKey.publicKey.export({ format: "jwk" }).x!,
      kid: "test-signer",
      alg: "EdDSA",
      use: "sig",
      status: "active",
      created_at: "2026-01-01T00:00:00.000Z",
      retired_at: null,
    },
  ],
} as unknown as SigningKeySet;

const requestOf = new WeakMap<ServerResponse, ReceivedRequest>();

type Json = Record<string, unknown>;

function parsedObject(text: string): Json | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

/** What the server would sign for `answer` to `request`: a decision or a settlement; undefined for anything else. */
function statementFor(request: ReceivedRequest, answer: Json): Json | undefined {
  const sent = parsedObject(request.body);
  if (sent === undefined || typeof answer["ledger_id"] !== "string") return undefined;
  if (request.url.endsWith("/authorize")) {
    return {
      type: "authority.decision.v1",
      grant_id: sent["grant_id"],
      tool: sent["tool"],
      amount_minor: sent["amount_minor"] ?? null,
      currency: sent["currency"] ?? null,
      args_sha256: sent["args"] === undefined ? null : createHash("sha256").update(canonicalJson(sent["args"])).digest("hex"),
      ledger_id: answer["ledger_id"],
      outcome: answer["outcome"],
      decided_at: answer["decided_at"],
      nonce: sent["nonce"],
    };
  }
  const settled = /\/decisions\/([^/]+)\/settle$/.exec(request.url);
  if (settled === null) return undefined;
  return {
    type: "authority.settlement.v1",
    decision_ledger_id: decodeURIComponent(settled[1]!),
    amount_minor: sent["amount_minor"],
    ledger_id: answer["ledger_id"],
    grant_id: answer["grant_id"],
    currency: answer["currency"] ?? null,
    held_minor: answer["held_minor"],
    released_minor: answer["released_minor"],
    settled_at: answer["settled_at"],
    nonce: sent["nonce"],
  };
}

/** The answer with the signature the real server would add, when it is a decision or settlement that carries none. */
function signed(response: ServerResponse, status: number, body: unknown): unknown {
  const request = requestOf.get(response);
  if (status !== 200 || request === undefined || typeof body !== "object" || body === null || Array.isArray(body)) return body;
  if ("signature" in body) return body;
  const statement = statementFor(request, body as Json);
  if (statement === undefined) return body;
  const value = sign(null, Buffer.from(canonicalJson(statement), "utf8"), testKey.privateKey).toString("base64url");
  return { ...body, signature: { alg: "EdDSA", kid: "test-signer", statement, value } };
}

/** The settlement the real server answers to a settle request: the decision it names and the amount asked for. */
export function settlementAnswer(request: ReceivedRequest, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const decision = /\/decisions\/([^/]+)\/settle$/.exec(request.url)?.[1];
  const sent = parsedObject(request.body);
  return {
    ledger_id: "led_settlement",
    decision_ledger_id: decision === undefined ? null : decodeURIComponent(decision),
    amount_minor: sent?.["amount_minor"] ?? null,
    ...extra,
  };
}

/** Answers a raw text; one that is a decision or settlement answered with 200 is signed as `sendJson` signs it. */
export function sendText(response: ServerResponse, status: number, text: string, contentType = "application/json"): void {
  const json = parsedObject(text);
  const body = json === undefined ? text : JSON.stringify(signed(response, status, json));
  response.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body) });
  response.end(body);
}

/** Answers `body` as JSON; a decision or settlement answered with 200 is signed as the real server signs it. */
export function sendJson(response: ServerResponse, status: number, body: unknown, contentType = "application/json"): void {
  const text = JSON.stringify(signed(response, status, body));
  response.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(text) });
  response.end(text);
}
