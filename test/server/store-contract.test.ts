// Runs the store contract against SQLite and PostgreSQL.
import { storeContract } from "./store-contract.js";
import { forEachStore } from "./targets.js";

forEachStore("store contract", storeContract);
