// The AuthZEN suite on PostgreSQL.

import { postgresTarget } from "../server/targets.js";
import { authzenSuite } from "./authzen-http.js";

authzenSuite(postgresTarget);
