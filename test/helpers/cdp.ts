import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A small Chrome DevTools Protocol client over Node's built-in WebSocket, driving Debian's
// real headless Chromium (no puppeteer: none is installed, and this is all the tests need).

export const CHROMIUM = process.env.TRAJWATCH_CHROMIUM ?? '/usr/bin/chromium';

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

export class Browser {
  readonly #proc: ChildProcess;
  readonly #ws: WebSocket;
  readonly #dir: string;
  #id = 0;
  readonly #pending = new Map<number, Pending>();
  readonly #listeners = new Set<(m: { method: string; params: unknown }) => void>();
  /** Console messages and uncaught exceptions of the page. */
  readonly console: string[] = [];

  private constructor(proc: ChildProcess, ws: WebSocket, dir: string) {
    this.#proc = proc;
    this.#ws = ws;
    this.#dir = dir;
    ws.addEventListener('message', (ev) => {
      const m = JSON.parse(String(ev.data)) as { id?: number; result?: unknown; error?: { message: string }; method?: string; params?: unknown };
      if (m.id !== undefined) {
        const p = this.#pending.get(m.id);
        this.#pending.delete(m.id);
        if (m.error !== undefined) p?.reject(new Error(m.error.message));
        else p?.resolve(m.result);
      } else if (m.method !== undefined) for (const l of this.#listeners) l({ method: m.method, params: m.params });
    });
  }

  /** `args`: extra Chromium switches (e.g. `--host-resolver-rules` to point a name at loopback). */
  static async launch(args: readonly string[] = []): Promise<Browser> {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-chromium-'));
    const proc = spawn(
      CHROMIUM,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--remote-debugging-port=0',
        `--user-data-dir=${dir}`,
        '--window-size=1280,900',
        ...args,
        'about:blank',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const port = await new Promise<number>((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`chromium did not open DevTools in 60 s: ${err}`)), 60_000);
      proc.stderr!.on('data', (c: Buffer) => {
        err += c.toString();
        const m = /DevTools listening on ws:\/\/[^:]+:(\d+)\//.exec(err);
        if (m !== null) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
      proc.once('exit', (code) => reject(new Error(`chromium exited ${code}: ${err}`)));
    });
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { type: string; webSocketDebuggerUrl: string }[];
    const page = targets.find((t) => t.type === 'page')!;
    const ws = new WebSocket(page.webSocketDebuggerUrl);
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve(), { once: true });
      ws.addEventListener('error', () => reject(new Error('CDP websocket failed')), { once: true });
    });
    const b = new Browser(proc, ws, dir);
    b.#listeners.add(({ method, params }) => {
      if (method === 'Runtime.consoleAPICalled') b.console.push(JSON.stringify((params as { args: unknown[] }).args));
      if (method === 'Runtime.exceptionThrown') b.console.push(`exception: ${JSON.stringify(params)}`);
    });
    await b.send('Page.enable');
    await b.send('Runtime.enable');
    return b;
  }

  send(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = ++this.#id;
    this.#ws.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject }));
  }

  async goto(url: string): Promise<void> {
    const loaded = new Promise<void>((resolve) => {
      const l = (m: { method: string }) => {
        if (m.method === 'Page.loadEventFired') {
          this.#listeners.delete(l);
          resolve();
        }
      };
      this.#listeners.add(l);
    });
    await this.send('Page.navigate', { url });
    await loaded;
  }

  /** Evaluates an expression in the page (promises awaited), returning its JSON value. */
  async eval<T>(expression: string): Promise<T> {
    const r = (await this.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true })) as {
      result: { value: T };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    };
    if (r.exceptionDetails !== undefined) throw new Error(`page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    return r.result.value;
  }

  /** Polls until the expression is truthy; returns its value. */
  async waitFor<T>(expression: string, timeoutMs = 10_000): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await this.eval<T>(expression).catch(() => undefined);
      if (v) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${expression}; console: ${this.console.join(' | ')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** A key press as a user makes it: keyDown (with its text), keyUp. */
  async press(key: string): Promise<void> {
    const named: Record<string, { code: string; keyCode: number; text?: string }> = {
      Enter: { code: 'Enter', keyCode: 13, text: '\r' },
      Escape: { code: 'Escape', keyCode: 27 },
      ArrowDown: { code: 'ArrowDown', keyCode: 40 },
      Tab: { code: 'Tab', keyCode: 9 },
    };
    const k = named[key] ?? { code: /^[0-9]$/.test(key) ? `Digit${key}` : `Key${key.toUpperCase()}`, keyCode: key.toUpperCase().charCodeAt(0), text: key };
    await this.send('Input.dispatchKeyEvent', {
      type: 'keyDown',
      key,
      code: k.code,
      windowsVirtualKeyCode: k.keyCode,
      ...(k.text === undefined ? {} : { text: k.text, unmodifiedText: k.text }),
    });
    await this.send('Input.dispatchKeyEvent', { type: 'keyUp', key, code: k.code, windowsVirtualKeyCode: k.keyCode });
  }

  /** Types text into the focused element. */
  async type(text: string): Promise<void> {
    await this.send('Input.insertText', { text });
  }

  async close(): Promise<void> {
    this.#ws.close();
    const exited = new Promise((r) => this.#proc.once('exit', r));
    this.#proc.kill('SIGTERM');
    await exited;
    await rm(this.#dir, { recursive: true, force: true });
  }
}
