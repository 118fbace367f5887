// The gateway's streamable HTTP listener as the tests start it: `authority gateway --listen` with a bearer token.
import { spawn } from "node:child_process";
import { CLI, KEY_ENV, readyField, type World } from "./harness.js";

/** The listener's bearer token in these tests, and the configuration block that names its variable. */
export const TOKEN_ENV = "GATEWAY_TEST_LISTEN_TOKEN";
export const TOKEN = "listen-token-0123456789abcdefghijklmnopqrstuvwxyz";
export const HTTP_BLOCK = `http:\n  token_env: ${TOKEN_ENV}\n`;
export const withToken = { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } };

/** Runs `authority gateway --listen 127.0.0.1:0` and answers its MCP URL once it is ready. */
export async function listening(world: World, config: string): Promise<{ url: string; stderr(): string; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, [CLI, "gateway", "--config", config, "--listen", "127.0.0.1:0"], {
    env: { PATH: process.env["PATH"] ?? "", [KEY_ENV]: world.agent.key, [TOKEN_ENV]: TOKEN },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const stop = () => {
    child.kill("SIGTERM");
    return exited;
  };
  try {
    return { url: await readyField(() => stderr, "url"), stderr: () => stderr, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
