// The identity rule of an API key, in one place: the KeyCreateBody schema is built from it and the
// server applies it to every key it creates, over HTTP or offline from the command line.

import { API_LIMITS } from "./limits.js";

/** An identity is 1 to 254 characters with no white space (an email, or a service name). */
export const KEY_IDENTITY_PATTERN = "^[^\\s]+$";
/** An email is something@something, again without white space. */
export const KEY_EMAIL_PATTERN = "^[^\\s@]+@[^\\s@]+$";

const IDENTITY = new RegExp(KEY_IDENTITY_PATTERN, "u");
const EMAIL = new RegExp(KEY_EMAIL_PATTERN, "u");

/** Length as JSON Schema counts it (code points), so that both checks agree on astral characters. */
function codePoints(text: string): number {
  let pairs = 0;
  for (let i = 0; i + 1 < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      pairs += 1;
      i += 1;
    }
  }
  return text.length - pairs;
}

/** Why `identity` (and `email`, when given) break the key identity rule; undefined when they keep it. */
export function keyIdentityFault(identity: string, email?: string): string | undefined {
  if (identity.length === 0) return "`identity` must not be empty";
  if (codePoints(identity) > API_LIMITS.identityCharsMax)
    return `\`identity\` must be at most ${API_LIMITS.identityCharsMax} characters, got ${codePoints(identity)}`;
  if (!IDENTITY.test(identity)) return "`identity` must contain no white space (an email, or a service name)";
  if (email === undefined) return undefined;
  if (codePoints(email) > API_LIMITS.identityCharsMax)
    return `\`email\` must be at most ${API_LIMITS.identityCharsMax} characters, got ${codePoints(email)}`;
  if (!EMAIL.test(email)) return "`email` must be an address like `name@example.com`, with no white space";
  return undefined;
}
