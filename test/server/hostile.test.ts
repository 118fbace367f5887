// Runs the hostile-input suite of issue 23 against a real server on SQLite and on PostgreSQL.
import { hostileHttpSuite } from "./hostile-http.js";
import { forEachStore } from "./targets.js";

forEachStore("hostile input", hostileHttpSuite);
