// Types of nginx.mjs, which the server benchmark (plain JavaScript) shares with the replica suite.

export declare const NGINX_RECIPE: string;
/** The nginx executable, or undefined when it is not installed. */
export declare const NGINX: string | undefined;
export declare function freePort(): Promise<number>;
export declare function siteConfig(recipe: string, ports: readonly number[], listenPort: number): string;
export interface Nginx {
  readonly baseUrl: string;
  readonly port: number;
  stop(): Promise<void>;
}
export declare function startNginx(ports: readonly number[]): Promise<Nginx>;
