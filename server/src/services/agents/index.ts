// Agents: registration and certification, which bounds the authority an agent may hold.

export {
  certificationStatus,
  certifyAgent,
  createAgent,
  listAgents,
  listCertificates,
  requireCertificationFor,
  revokeCertificate,
  visibleAgent,
} from "./agents.js";
