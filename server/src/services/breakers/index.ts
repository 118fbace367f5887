// Breakers and contracts: behavioural contracts, circuit breakers, their windows and their counterfactual.

export {
  armBreaker,
  createBreaker,
  disarmBreaker,
  evaluateBreakers,
  evaluateBreakersAfterDecision,
  getBreaker,
  listFindings,
  watchBreakers,
} from "./breakers.js";
export type { SealedDecision } from "./breakers.js";
export { CarriedWindows } from "./breaker-windows.js";
export { declareContract, listContracts, signalOf } from "./contracts.js";
export { breakerCounterfactual } from "./counterfactual.js";
