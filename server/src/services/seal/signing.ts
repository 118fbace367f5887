// Signing: the server's Ed25519 keys and the signatures on its answers. A statement (the fields an
// answer vouches for) is signed over its canonical JSON (RFC 8785); the key pairs live in the
// database with the private key sealed under the server key, and the newest active one signs.

import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { answerBatchText, leafHash, treeWithPaths } from "@agent-authority/sdk";
import { openSealed, sealBytes, ServerKeyError } from "../../server-key.js";
import type { SigningKeyRow } from "../../store/ledger/index.js";
import type { Store } from "../../store/core/index.js";
import { canonicalJson } from "./ledger.js";

export const SIGNING_LIMITS = Object.freeze({
  /** How often a replica reads the keys again, so that another replica's rotation reaches it. */
  refreshIntervalMs: 30_000,
});

/** The signature an answer carries: the statement as signed, and who signed it. */
export interface SignatureField {
  readonly alg: "EdDSA";
  readonly kid: string;
  readonly statement: Readonly<Record<string, string | number | null>>;
  /** Ed25519 over the statement's canonical JSON (RFC 8785), base64url without padding. */
  readonly value: string;
}

/**
 * The signature an answer carries since batches are signed (decision 1901): the statement, its
 * place in the batch signed with it, the batch's root and one signature over that root.
 */
export interface BatchSignatureField {
  readonly v: 2;
  readonly alg: "EdDSA";
  readonly kid: string;
  readonly statement: Readonly<Record<string, string | number | null>>;
  /** Leaves of the batch's tree: the statements signed together. */
  readonly tree_size: number;
  /** This statement's leaf. */
  readonly leaf_index: number;
  /** The RFC 9162 inclusion path of the leaf, lowest first, each hash in base64url. */
  readonly path: readonly string[];
  /** The tree's root hash in base64url. */
  readonly root: string;
  /** Ed25519 over answerBatchText(tree_size, root), base64url without padding. */
  readonly value: string;
}

/**
 * A batch signed (decision 1901): the signing key's id, its statements' canonical texts, each leaf's
 * inclusion path, the root and the signature in base64url. A node's base64url text is written once
 * however many paths hold it.
 */
interface SignedBatch {
  readonly kid: string;
  readonly statementTexts: readonly string[];
  readonly paths: readonly (readonly Buffer[])[];
  readonly root: string;
  readonly value: string;
  /** The base64url text of a node of the tree. */
  readonly text: (hash: Buffer) => string;
}

/** One public key of the JWKS at GET /v1/signing-keys. */
export interface PublicSigningKey {
  readonly kty: "OKP";
  readonly crv: "Ed25519";
  readonly x: string;
  readonly kid: string;
  readonly alg: "EdDSA";
  readonly use: "sig";
  readonly status: "active" | "retired";
  readonly created_at: string;
  readonly retired_at: string | null;
}

/** The key id: the JWK thumbprint of the public key (RFC 7638), so that a kid names exactly one key. */
export function keyId(x: string): string {
  return createHash("sha256").update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest("base64url");
}

/** The context a private key is sealed with: a sealed key moved to another row does not open. */
const sealContext = (kid: string): string => `signing-key ${kid}`;

/** A new key pair as the store keeps it. */
function newKeyRow(sealKey: Buffer, now: number): SigningKeyRow {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const x = publicKey.export({ format: "jwk" }).x!;
  const kid = keyId(x);
  const pkcs8 = privateKey.export({ format: "der", type: "pkcs8" });
  return {
    kid,
    alg: "EdDSA",
    public_key: x,
    sealed_private_key: sealBytes(sealKey, pkcs8, sealContext(kid)),
    status: "active",
    created_at: now,
    retired_at: null,
  };
}

/** The private key of a row when the server key opens it and it matches the row's public key. */
function openRow(sealKey: Buffer, row: SigningKeyRow): KeyObject | undefined {
  const pkcs8 = openSealed(sealKey, row.sealed_private_key, sealContext(row.kid));
  if (pkcs8 === undefined) return undefined;
  const privateKey = createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" });
  const x = createPublicKey(privateKey).export({ format: "jwk" }).x;
  return x === row.public_key && keyId(x) === row.kid ? privateKey : undefined;
}

function publicView(row: SigningKeyRow): PublicSigningKey {
  return {
    kty: "OKP",
    crv: "Ed25519",
    x: row.public_key,
    kid: row.kid,
    alg: "EdDSA",
    use: "sig",
    status: row.status,
    created_at: new Date(row.created_at).toISOString(),
    retired_at: row.retired_at === null ? null : new Date(row.retired_at).toISOString(),
  };
}

/**
 * The keys of one process: the active key signs; every key the server key opens is listed. A row
 * the server key does not open (written without it) is never listed, so that whoever can write
 * the database cannot slip a key of their own into the JWKS.
 */
export class Signer {
  readonly #sealKey: Buffer;
  #active: { kid: string; key: KeyObject } | undefined;
  #listed: readonly PublicSigningKey[] = [];

  constructor(sealKey: Buffer) {
    this.#sealKey = sealKey;
  }

  /** Reads the keys, creating the first when there is none; throws when the active key does not open. */
  async load(store: Store, now: number): Promise<void> {
    let rows = await store.signingKeys().list();
    if (!rows.some((row) => row.status === "active")) {
      rows = await store.transaction(async (tx) => {
        const keys = tx.signingKeys();
        await keys.lock();
        if (!(await keys.list()).some((row) => row.status === "active")) await keys.insert(newKeyRow(this.#sealKey, now));
        return keys.list();
      });
    }
    this.#adopt(rows);
  }

  #adopt(rows: readonly SigningKeyRow[]): void {
    const listed: PublicSigningKey[] = [];
    let active: { kid: string; key: KeyObject } | undefined;
    for (const row of rows) {
      const key = openRow(this.#sealKey, row);
      if (row.status === "active" && key === undefined) {
        throw new ServerKeyError(
          `the server key does not open the active signing key \`${row.kid}\`: every replica needs the server key the first one made (AUTHORITY_SERVER_KEY_FILE or AUTHORITY_SERVER_KEY; docs/operations.md)`,
        );
      }
      if (key === undefined) continue;
      listed.push(publicView(row));
      if (row.status === "active") active = { kid: row.kid, key };
    }
    this.#active = active;
    this.#listed = listed;
  }

  /**
   * Retires the active key, which must be `retireKid`, and makes a new one; answers the new key, or
   * undefined (nothing changed) when the active key is another one.
   */
  async rotate(store: Store, retireKid: string, now: number): Promise<PublicSigningKey | undefined> {
    const rows = await store.transaction(async (tx) => {
      const keys = tx.signingKeys();
      await keys.lock();
      if (!(await keys.retire(retireKid, now))) return undefined;
      await keys.insert(newKeyRow(this.#sealKey, now));
      return keys.list();
    });
    if (rows === undefined) return undefined;
    this.#adopt(rows);
    return this.#listed.find((key) => key.kid === this.#active!.kid)!;
  }

  /** The JWKS: every key this server signed with, active and retired. */
  jwks(): { keys: readonly PublicSigningKey[] } {
    return { keys: this.#listed };
  }

  /** Signs the bytes of a note's text (a checkpoint, decision 0621) with the active key; answers the key and the raw signature. */
  signText(text: string): { kid: string; x: string; signature: Buffer } {
    const active = this.#active;
    if (active === undefined) throw new Error("the signer signs only after load()");
    const x = this.#listed.find((key) => key.kid === active.kid)!.x;
    return { kid: active.kid, x, signature: sign(null, Buffer.from(text, "utf8"), active.key) };
  }

  /** The kid of the oldest key this server lists: stable for the life of the database, whatever rotations follow. */
  firstKid(): string | undefined {
    return this.#listed[0]?.kid;
  }

  /**
   * Signs the statements of answers given together (a group-commit batch, or one answer) with one
   * signature: each statement's leaf is the RFC 9162 leaf hash of its canonical JSON, and the
   * signature covers the tree's root and size (decision 1901). Answers each statement's signature
   * member, in order; the members of each statement must already be in canonical order.
   */
  signAnswers(statements: readonly Readonly<Record<string, string | number | null>>[]): BatchSignatureField[] {
    const batch = this.#signBatch(statements);
    if (batch === undefined) return [];
    return statements.map((statement, i) => ({
      v: 2,
      alg: "EdDSA",
      kid: batch.kid,
      statement,
      tree_size: statements.length,
      leaf_index: i,
      path: batch.paths[i]!.map(batch.text),
      root: batch.root,
      value: batch.value,
    }));
  }

  /**
   * What `signAnswers` answers, each member as the JSON text `JSON.stringify` writes of it, for
   * answers sent as text: the member is written from its statement's canonical text and the parts
   * its batch shares, without the object. Base64url needs no escapes.
   */
  signAnswerTexts(statements: readonly Readonly<Record<string, string | number | null>>[]): string[] {
    const batch = this.#signBatch(statements);
    if (batch === undefined) return [];
    const { kid, statementTexts, paths, root, value, text } = batch;
    const head = `{"v":2,"alg":"EdDSA","kid":${JSON.stringify(kid)},"statement":`;
    const size = `,"tree_size":${statements.length},"leaf_index":`;
    const tail = `],"root":"${root}","value":"${value}"}`;
    return statementTexts.map((statementText, i) => {
      let path = "";
      for (const hash of paths[i]!) path += `${path === "" ? '"' : ',"'}${text(hash)}"`;
      return `${head}${statementText}${size}${i},"path":[${path}${tail}`;
    });
  }

  /** The batch of `statements` signed; undefined for none. */
  #signBatch(statements: readonly Readonly<Record<string, string | number | null>>[]): SignedBatch | undefined {
    const active = this.#active;
    if (active === undefined) throw new Error("the signer signs only after load()");
    if (statements.length === 0) return undefined;
    // Members in canonical order with string, integer or null values: JSON.stringify writes the
    // canonical JSON itself. A statement out of order would be signed over other text than the one
    // a verifier makes of it, and its answer would be refused, never accepted.
    const statementTexts = statements.map((statement) => JSON.stringify(statement));
    const { root, paths } = treeWithPaths(statementTexts.map((text) => leafHash(text)));
    const value = sign(null, Buffer.from(answerBatchText(statements.length, root), "utf8"), active.key).toString("base64url");
    // A node is on the path of every leaf below its sibling: each is written in base64url once.
    const texts = new Map<Buffer, string>();
    const text = (hash: Buffer): string => {
      let known = texts.get(hash);
      if (known === undefined) texts.set(hash, (known = hash.toString("base64url")));
      return known;
    };
    return { kid: active.kid, statementTexts, paths, root: root.toString("base64url"), value, text };
  }

  /** Signs `statement` alone, over its canonical JSON (the first form, which receipts keep); its members must already be in canonical order with string, integer or null values. */
  sign(statement: Readonly<Record<string, string | number | null>>): SignatureField {
    const active = this.#active;
    if (active === undefined) throw new Error("the signer signs only after load()");
    const value = sign(null, Buffer.from(canonicalJson(statement), "utf8"), active.key).toString("base64url");
    return { alg: "EdDSA", kid: active.kid, statement, value };
  }
}
