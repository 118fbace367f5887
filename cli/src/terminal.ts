// Where the CLI writes, and whether it may use colours and progress: only on a terminal.
export interface Writer {
  write(text: string): void;
}

export interface Terminal {
  readonly out: Writer;
  readonly err: Writer;
  /** Colours: stdout is a terminal, `NO_COLOR` is unset or empty, and `TERM` is not `dumb`; `FORCE_COLOR` forces them. */
  readonly color: boolean;
  /** Progress lines on stderr: only when stderr is a terminal. */
  readonly progress: boolean;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** A reader that stops early (`authority preview … | head`) closes the pipe: end quietly, as other tools do. */
function exitOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw error;
  });
}

export function processTerminal(): Terminal {
  const env = process.env;
  exitOnClosedPipe(process.stdout);
  const forced = env["FORCE_COLOR"] !== undefined && env["FORCE_COLOR"] !== "" && env["FORCE_COLOR"] !== "0";
  const noColor = env["NO_COLOR"] !== undefined && env["NO_COLOR"] !== "";
  const color = forced || (!noColor && process.stdout.isTTY === true && env["TERM"] !== "dumb");
  return {
    out: { write: (text) => void process.stdout.write(text) },
    err: { write: (text) => void process.stderr.write(text) },
    color,
    progress: process.stderr.isTTY === true && env["CI"] === undefined,
    cwd: process.cwd(),
    env,
  };
}

export interface Paint {
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  bold(text: string): string;
  dim(text: string): string;
}

const ansi = (open: number, close: number) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`;

export function paint(enabled: boolean): Paint {
  if (!enabled) {
    const plain = (text: string): string => text;
    return { red: plain, green: plain, yellow: plain, cyan: plain, bold: plain, dim: plain };
  }
  return { red: ansi(31, 39), green: ansi(32, 39), yellow: ansi(33, 39), cyan: ansi(36, 39), bold: ansi(1, 22), dim: ansi(2, 22) };
}

/** A one-line progress indicator on stderr that erases itself; silent when not on a terminal. */
export function progressLine(terminal: Terminal): { update(text: string): void; done(): void } {
  if (!terminal.progress) return { update: () => undefined, done: () => undefined };
  let shown = false;
  return {
    update(text) {
      terminal.err.write(`\r\x1b[2K${text.slice(0, 100)}`);
      shown = true;
    },
    done() {
      if (shown) terminal.err.write("\r\x1b[2K");
      shown = false;
    },
  };
}
