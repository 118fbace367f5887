// Types of the endpoints whose schemas @agent-authority/api does not define yet, written from the documented API,
// and names derived from generated types.
// Each is replaced by its generated type once the schema appears (docs/decisions/0501-sdk-types.md).
import type { AuthorizeBody, Decision } from "./generated/types.js";

/** The outcome of a decision: `allow`, or one of the refusals `deny`, `exhausted`, `gated`. */
export type Outcome = Decision["outcome"];

/** What an agent presents about itself, in the certificate's own field names (docs/decisions.md, gate 5). */
export type Attestation = NonNullable<AuthorizeBody["attestation"]>;
