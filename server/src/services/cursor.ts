// Opaque page cursors: the position after which the next page starts, wrapped so that clients pass
// it back unchanged instead of building one. A cursor that does not decode is a 400, never a 500.

import { ApiProblem } from "../http/problem.js";

/** The longest cursor accepted, in characters; a real one is far shorter. */
export const CURSOR_CHARS_MAX = 128;

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Wraps the id a page ended on for the list named `list`. */
export function encodeCursor(list: string, lastId: string): string {
  return Buffer.from(`${list}:${lastId}`, "utf8").toString("base64url");
}

/** The id a cursor of the list `list` carries; 400 `invalid_cursor` unless it is one this server made. */
export function decodeCursor(list: string, cursor: string, idPattern: RegExp): string {
  const refused = () => new ApiProblem("invalid_cursor", "`cursor` must be a `next_cursor` this list answered, passed back unchanged");
  if (cursor.length > CURSOR_CHARS_MAX || !BASE64URL.test(cursor)) throw refused();
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const prefix = `${list}:`;
  if (!text.startsWith(prefix)) throw refused();
  const id = text.slice(prefix.length);
  if (!idPattern.test(id)) throw refused();
  return id;
}
