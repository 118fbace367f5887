// nginx in front of server replicas, configured from docs/deploy/nginx.conf with only the replica
// addresses and the listen line changed: used by the replica suite and by the server benchmark.

import { spawn } from "node:child_process";
import { accessSync, chmodSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

export const NGINX_RECIPE = fileURLToPath(new URL("../../docs/deploy/nginx.conf", import.meta.url));

/** Debian's nginx lives in /usr/sbin, which an unprivileged PATH may lack. */
function findNginx() {
  const dirs = [...(process.env["PATH"] ?? "").split(delimiter), "/usr/sbin", "/usr/local/sbin"];
  for (const dir of dirs) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, "nginx"), constants.X_OK);
      return join(dir, "nginx");
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** The nginx executable, or undefined when it is not installed. */
export const NGINX = findNginx();

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released for nginx to take). */
export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * The recipe with its three example replicas replaced by `ports` and its listen line by
 * `listenPort`; everything else stays as documented. Throws when the recipe no longer has the
 * lines it replaces, so that the tests and the documented file cannot drift apart unnoticed.
 */
export function siteConfig(recipe, ports, listenPort) {
  const servers = [...recipe.matchAll(/^( *)server 127\.0\.0\.1:\d+ (.*);$/gm)];
  if (servers.length !== 3) throw new Error(`the recipe names ${servers.length} replicas, not 3`);
  const [first, ...rest] = servers;
  const lines = ports.map((port) => `${first[1]}server 127.0.0.1:${port} ${first[2]};`).join("\n");
  let text = recipe.replace(first[0], lines);
  for (const line of rest) text = text.replace(`${line[0]}\n`, "");
  if (!/^ *listen 80;$/m.test(text)) throw new Error("the recipe has no `listen 80;` line");
  return text.replace(/^( *)listen 80;$/m, `$1listen 127.0.0.1:${listenPort};`);
}

async function waitForPort(port, child, output) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${output()}`);
    const open = await new Promise((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.end();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port}: ${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts nginx in the foreground, in a directory of its own, in front of `ports`. */
export async function startNginx(ports) {
  if (NGINX === undefined) throw new Error("nginx is not installed");
  const dir = mkdtempSync(join(tmpdir(), "authority-nginx-"));
  // Worker processes may run as another user (nobody, when started as root).
  chmodSync(dir, 0o755);
  const port = await freePort();
  writeFileSync(join(dir, "site.conf"), siteConfig(readFileSync(NGINX_RECIPE, "utf8"), ports, port));
  writeFileSync(
    join(dir, "nginx.conf"),
    [
      "daemon off;",
      "worker_processes 1;",
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/error.log warn;`,
      "events { worker_connections 1024; }",
      "http {",
      "  access_log off;",
      ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((kind) => `  ${kind}_temp_path ${dir}/${kind};`),
      `  include ${dir}/site.conf;`,
      "}",
    ].join("\n"),
  );
  const child = spawn(NGINX, ["-p", dir, "-c", join(dir, "nginx.conf"), "-e", join(dir, "error.log")], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (chunk) => {
    out += String(chunk);
  });
  child.stderr.on("data", (chunk) => {
    out += String(chunk);
  });
  const exited = new Promise((resolve) => child.on("exit", () => resolve()));
  try {
    await waitForPort(port, child, () => out);
  } catch (error) {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    async stop() {
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
