// A load generator for POST /v1/authorize in a process of its own, so that the server it measures
// does not share an event loop with it: `connections` kept-alive connections, each sending one
// request after another for `seconds`. Prints one JSON line: answers per second, and the first
// answer that was not an allow (the bench fails on it).
//
//   node authorize-load.mjs <base url> <api key> <json body> <connections> <seconds>
import { Agent, request } from "node:http";

const [base, key, body, connectionsText, secondsText] = process.argv.slice(2);
const connections = Number(connectionsText);
const seconds = Number(secondsText);
const url = new URL(`${base}/authorize`);
const agent = new Agent({ keepAlive: true, maxSockets: connections });
const headers = { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) };

function authorize() {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent, headers }, (res) => {
      const chunks = [];
      res.on("data", (chunk) => chunks.push(chunk));
      res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

let done = 0;
let wrong;
const deadline = performance.now() + seconds * 1000;
async function worker() {
  while (performance.now() < deadline && wrong === undefined) {
    const text = await authorize();
    if (JSON.parse(text).outcome !== "allow") wrong = text.slice(0, 300);
    done += 1;
  }
}
const started = performance.now();
await Promise.all(Array.from({ length: connections }, worker));
const elapsed = (performance.now() - started) / 1000;
agent.destroy();
process.stdout.write(`${JSON.stringify({ rate: done / elapsed, wrong })}\n`);
