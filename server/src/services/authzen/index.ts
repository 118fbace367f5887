// AuthZEN: the AuthZEN 1.0 access evaluation, answered by the authorize service.

export { authorizeBodyOf, evaluateOne, speaksFor, undecided } from "./evaluation.js";
export type { AuthzenDecision, AuthzenEvaluation, EvaluationAsker } from "./evaluation.js";
export { SEARCH_LIMITS, searchActions, searchSubjects } from "./search.js";
