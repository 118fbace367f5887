// Runs the suite of the decision path's reads against a real server on SQLite and on PostgreSQL.
import { decisionReadsSuite } from "./decision-reads-http.js";
import { forEachStore } from "./targets.js";

forEachStore("decision reads over HTTP", decisionReadsSuite);
