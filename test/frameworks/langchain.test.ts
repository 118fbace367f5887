// The langchain adapter: the shared behaviour suite through the framework's own agent loop and test model.
import { describeAdapter } from "./behaviour.js";
import { langChainDriver } from "./drivers.js";

describeAdapter(langChainDriver);
