// The floor under any stdio gateway that decides each call on the server: a relay process that
// starts the upstream, passes every message through as bytes, and holds each `tools/call` line until
// one durable authorize has answered, sent with the SDK's own HTTP/1.1 client on a kept-alive
// connection, as the gateway sends it. It parses nothing, checks no signature and keeps no session: what it adds to a call is
// one more process on the path and one decision's round trip, which the real gateway cannot go
// under. Started by ../gateway.mjs; never part of the product.
//
//   node gateway-floor-relay.mjs <upstream command> [args…]
//   RELAY_AUTHORIZE_URL, RELAY_AUTHORIZE_KEY, RELAY_AUTHORIZE_BODY (JSON): the decision to wait for
import { spawn } from "node:child_process";
import { send } from "../../../packages/sdk/dist/http1.js";

const [command, ...args] = process.argv.slice(2);
const url = process.env.RELAY_AUTHORIZE_URL;
const key = process.env.RELAY_AUTHORIZE_KEY;
const body = process.env.RELAY_AUTHORIZE_BODY;
if (command === undefined || url === undefined || key === undefined || body === undefined) {
  process.stderr.write(
    "usage: RELAY_AUTHORIZE_URL=… RELAY_AUTHORIZE_KEY=… RELAY_AUTHORIZE_BODY=… node gateway-floor-relay.mjs <command> [args…]\n",
  );
  process.exit(2);
}

const upstream = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"] });
upstream.stdout.pipe(process.stdout);
upstream.on("exit", (code) => process.exit(code ?? 1));

let sent = 0;
const target = new URL(url);

/** One durable authorize; resolves when its answer has been read whole, rejects on anything but 200. */
async function authorize() {
  const response = await send({
    method: "POST",
    url: target,
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      "idempotency-key": `relay-${process.pid}-${(sent += 1)}`,
    },
    body,
    signal: new AbortController().signal,
    maxBytes: 1 << 20,
  });
  if (response.status !== 200) throw new Error(`authorize answered ${response.status}`);
}

// Lines are passed on in the order they came: a call's line waits for its decision, and every line
// after it waits behind it.
let pending = "";
let queue = Promise.resolve();
process.stdin.on("data", (chunk) => {
  pending += chunk;
  for (let end = pending.indexOf("\n"); end >= 0; end = pending.indexOf("\n")) {
    const line = pending.slice(0, end + 1);
    pending = pending.slice(end + 1);
    const decided = line.includes('"method":"tools/call"');
    queue = queue.then(async () => {
      if (decided) await authorize();
      upstream.stdin.write(line);
    });
    queue.catch((error) => {
      process.stderr.write(`relay: ${error.message}\n`);
      process.exit(1);
    });
  }
});
process.stdin.on("end", () => upstream.stdin.end());
