// The ai-sdk adapter: the shared behaviour suite through the framework's own agent loop and test model.
import { describeAdapter } from "./behaviour.js";
import { aiSdkDriver } from "./drivers.js";

describeAdapter(aiSdkDriver);
