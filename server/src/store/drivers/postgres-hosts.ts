// Several PostgreSQL hosts in one database URL (libpq's form, `postgres://h1:p1,h2:p2/db`): the
// pool's connections go to the first host that accepts them and is the primary (read-write).

import pg from "pg";
import { DatabaseUnavailableError, isDatabaseUnavailable } from "../sql/index.js";

export const HOST_LIMITS = Object.freeze({
  /** Hosts one database URL may name. */
  hosts: 16,
});

/** The hosts of a database URL, each as a URL of its own, and whether only a primary will do. */
export interface DatabaseHosts {
  /** One URL per host, in the order given, each with the URL's user, database and parameters. */
  readonly urls: readonly string[];
  /**
   * Connections are kept only where `SHOW transaction_read_only` is `off`: asked for with
   * `target_session_attrs=read-write` or `primary`, and always when the URL names several hosts.
   */
  readonly primaryOnly: boolean;
}

/** A database URL the server cannot use; nothing was opened. */
export class DatabaseUrlError extends Error {}

const URL_PARTS = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)(.*)$/s;

/** Splits `host:port`, `[v6]:port` or `host` (port 5432). */
function hostPort(text: string): string {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(text);
  if (match === null) throw new DatabaseUrlError(`the database URL names a host \`${text}\` that is not host, host:port or [address]:port`);
  return `${match[1]}:${match[2] ?? "5432"}`;
}

/**
 * The hosts of a `postgres://` URL. `target_session_attrs` is the server's to honour (node-postgres
 * would pass it to PostgreSQL as a setting) and is taken out of every host's URL; only `any`,
 * `read-write` and `primary` are understood, since the server writes.
 */
export function databaseHosts(url: string): DatabaseHosts {
  const parts = URL_PARTS.exec(url);
  if (parts === null) throw new DatabaseUrlError("the database URL is not a postgres:// URL");
  const [, scheme, user = "", hostList = "", rest = ""] = parts;
  const hosts = hostList === "" ? [] : hostList.split(",");
  if (hosts.length > HOST_LIMITS.hosts)
    throw new DatabaseUrlError(`the database URL names ${hosts.length} hosts; at most ${HOST_LIMITS.hosts}`);
  const query = rest.indexOf("?");
  const params = new URLSearchParams(query < 0 ? "" : rest.slice(query + 1));
  const attrs = params.get("target_session_attrs");
  if (attrs !== null && !["any", "read-write", "primary"].includes(attrs)) {
    throw new DatabaseUrlError(`target_session_attrs=${attrs} is not one the server can write to: use read-write or primary`);
  }
  params.delete("target_session_attrs");
  const tail = `${query < 0 ? rest : rest.slice(0, query)}${params.size > 0 ? `?${params.toString()}` : ""}`;
  const urls = hosts.length <= 1 ? [`${scheme}${user}${hostList}${tail}`] : hosts.map((host) => `${scheme}${user}${hostPort(host)}${tail}`);
  return { urls, primaryOnly: hosts.length > 1 || attrs === "read-write" || attrs === "primary" };
}

/** Which host new connections go to: the one that last worked, or the next after one that failed. */
export class HostRing {
  #current = 0;
  constructor(readonly hosts: DatabaseHosts) {}

  get current(): number {
    return this.#current;
  }

  /** Host `index` failed or is not the primary: new connections try the next one. */
  failed(index: number): void {
    if (index === this.#current) this.#current = (index + 1) % this.hosts.urls.length;
  }
}

/** Whether a connected session may write: what `target_session_attrs=read-write` checks. */
async function writable(client: pg.Client): Promise<boolean> {
  const result = await client.query("SHOW transaction_read_only");
  return (result.rows[0] as { transaction_read_only?: unknown } | undefined)?.transaction_read_only === "off";
}

type ConnectCallback = ((error: Error) => void) | ((error: null, client: pg.Client) => void);

/**
 * The pool's client class: connects to the ring's current host and, when only a primary will do,
 * keeps the connection only if it may write; a refusal moves the ring on. It also never lets an
 * error on an idle or checked-out connection crash the process: the next query reports it.
 */
export function ringClient(ring: HostRing): typeof pg.Client {
  return class RingClient extends pg.Client {
    readonly #host: number;

    constructor(config: pg.ClientConfig) {
      const host = ring.current;
      super({ ...config, connectionString: ring.hosts.urls[host]! });
      this.#host = host;
      this.on("error", () => undefined);
    }

    /** Tells the ring that this connection's host failed it. */
    lost(): void {
      ring.failed(this.#host);
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<pg.Client> | undefined {
      const done = this.#connectWritable().then(() => this as pg.Client);
      if (callback === undefined) return done;
      const answer = callback as (error: Error | null, client?: pg.Client) => void;
      done.then(
        (client) => answer(null, client),
        (error: Error) => answer(error),
      );
      return undefined;
    }

    async #connectWritable(): Promise<void> {
      try {
        await super.connect();
        if (!ring.hosts.primaryOnly || (await writable(this as pg.Client))) return;
      } catch (error) {
        if (isDatabaseUnavailable(error)) ring.failed(this.#host);
        throw error;
      }
      ring.failed(this.#host);
      await this.end().catch(() => undefined);
      throw new DatabaseUnavailableError(`the database host ${this.#host + 1} of ${ring.hosts.urls.length} is read-only (not the primary)`);
    }
  };
}

/** Marks the host of a pooled connection that met an unavailable error as failed. */
export function hostLost(client: unknown): void {
  (client as { lost?: () => void }).lost?.();
}
