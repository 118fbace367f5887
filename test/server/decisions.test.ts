// Runs the decision-path suite against a real server on SQLite and on PostgreSQL.
import { decisionsHttpSuite } from "./decisions-http.js";
import { forEachStore } from "./targets.js";

forEachStore("decision path over HTTP", decisionsHttpSuite);
