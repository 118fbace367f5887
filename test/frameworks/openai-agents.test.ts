// The openai-agents adapter: the shared behaviour suite through the framework's own agent loop and test model.
import { describeAdapter } from "./behaviour.js";
import { openAiAgentsDriver } from "./drivers.js";

describeAdapter(openAiAgentsDriver);
