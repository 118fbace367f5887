// The AuthZEN suite on SQLite.

import { sqliteTarget } from "../server/targets.js";
import { authzenSuite } from "./authzen-http.js";

authzenSuite(sqliteTarget);
