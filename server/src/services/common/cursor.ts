// Opaque page cursors: the position after which the next page starts, authenticated with an HMAC
// under a key derived from the server key, so that clients pass it back unchanged instead of
// building one. A cursor that does not decode, or whose tag does not match, is a 400, never a 500.

import { createHmac, timingSafeEqual } from "node:crypto";
import { Refusal } from "./refusal.js";

/** The longest cursor accepted, in characters; a real one is far shorter. */
export const CURSOR_CHARS_MAX = 128;

/** The HMAC-SHA-256 tag is cut to 128 bits, in base64url. */
const TAG_CHARS = 22;
const CURSOR = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{22})$/;

function tag(key: Buffer, text: string): string {
  return createHmac("sha256", key).update(text, "utf8").digest().subarray(0, 16).toString("base64url");
}

/** Wraps the id a page ended on for the list named `list`, with its tag under `key`. */
export function encodeCursor(key: Buffer, list: string, lastId: string): string {
  const text = `${list}:${lastId}`;
  return `${Buffer.from(text, "utf8").toString("base64url")}.${tag(key, text)}`;
}

/** The id a cursor of the list `list` carries; 400 `invalid_cursor` unless this server (or a replica with its key) made it. */
export function decodeCursor(key: Buffer, list: string, cursor: string, idPattern: RegExp): string {
  const refused = () => new Refusal("invalid_cursor", "`cursor` must be a `next_cursor` this list answered, passed back unchanged");
  const parts = cursor.length > CURSOR_CHARS_MAX ? null : CURSOR.exec(cursor);
  if (parts === null) throw refused();
  const text = Buffer.from(parts[1]!, "base64url").toString("utf8");
  // One spelling per cursor: base64url leaves a few bits of the last character unread, and a text
  // that is not UTF-8 decodes with replacement characters; either spelling is another cursor.
  if (Buffer.from(text, "utf8").toString("base64url") !== parts[1]) throw refused();
  const expected = Buffer.from(tag(key, text), "utf8");
  const presented = Buffer.from(parts[2]!, "utf8");
  if (presented.length !== TAG_CHARS || !timingSafeEqual(expected, presented)) throw refused();
  const prefix = `${list}:`;
  if (!text.startsWith(prefix)) throw refused();
  const id = text.slice(prefix.length);
  if (!idPattern.test(id)) throw refused();
  return id;
}
