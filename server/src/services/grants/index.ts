// Grants and delegation: issue, approve, delegate, escalate and revoke grants, and check their policies.

export {
  approveGrant,
  delegateGrant,
  escalateEnforcement,
  getGrant,
  grantFromIssueBody,
  grantTerms,
  issueGrant,
  listGrants,
  listPendingGrants,
  revokeGrant,
  revokeSubtreeWithin,
} from "./grants.js";
export { checkPolicy } from "./policy.js";
