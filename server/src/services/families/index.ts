// Families and impact: grant families, instantiating them and previewing a candidate version's impact.

export { getFamily, instantiate, listFamilies, pushFamily, versionQuery } from "./families.js";
export { IMPACT_CERTIFICATES_PER_AGENT_MAX, previewFamilyImpact } from "./family-impact.js";
