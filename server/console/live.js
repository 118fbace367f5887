// The console listens: it reads GET /v1/events with the signed-in key (a fetch, since EventSource
// cannot send a key header) and tells the page of each event as a DOM event `authority-event`
// on window. A dropped stream is opened again from the last id received, after a pause.
// @ts-check

const EVENTS_PATH = "/v1/events";
const RETRY_MS = 2000;

/** @type {AbortController | null} */
let controller = null;

/**
 * One parsed server-sent event block, or null for a comment or a block without data.
 * @param {string} block
 * @returns {{ id: string | null, event: unknown } | null}
 */
function parseBlock(block) {
  /** @type {string | null} */
  let id = null;
  /** @type {string | null} */
  let data = null;
  for (const line of block.split("\n")) {
    if (line.startsWith("id: ")) id = line.slice(4);
    else if (line.startsWith("data: ")) data = line.slice(6);
  }
  return data === null ? null : { id, event: JSON.parse(data) };
}

/**
 * Reads the stream until it ends; `refused` when the key may not read it.
 * @param {string} key
 * @param {string | null} lastId
 * @param {AbortSignal} signal
 * @returns {Promise<{ lastId: string | null, refused: boolean }>}
 */
async function readStream(key, lastId, signal) {
  let last = lastId;
  /** @type {Record<string, string>} */
  const headers = { accept: "text/event-stream", authorization: `Bearer ${key}` };
  if (lastId !== null) headers["last-event-id"] = lastId;
  const response = await fetch(EVENTS_PATH, { headers, signal, credentials: "omit", cache: "no-store", redirect: "error" });
  if (!response.ok || response.body === null) return { lastId, refused: response.status === 401 || response.status === 403 };
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { lastId: last, refused: false };
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) !== -1) {
      const parsed = parseBlock(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (parsed === null) continue;
      last = parsed.id ?? last;
      window.dispatchEvent(new CustomEvent("authority-event", { detail: parsed.event }));
    }
  }
}

/**
 * Starts listening with `key` (stopping any earlier listener); resumes after drops until stopped.
 * @param {string} key
 */
export function listen(key) {
  stopListening();
  const own = new AbortController();
  controller = own;
  void (async () => {
    /** @type {string | null} */
    let lastId = null;
    while (!own.signal.aborted) {
      try {
        const result = await readStream(key, lastId, own.signal);
        lastId = result.lastId;
        if (result.refused) return;
      } catch {
        // A network failure: try again after the pause, from the last id received.
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  })();
}

export function stopListening() {
  controller?.abort();
  controller = null;
}
