import { request } from 'node:http';

/** One HTTP request with exactly these headers, `Host` included (fetch would not let a test set it). Loose JSON, or the text. */
export function rawRequest(url: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; json: any }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const length = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) };
    const req = request({ host: u.hostname, port: u.port, method, path, headers: { ...headers, ...length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown = text;
        try {
          json = JSON.parse(text);
        } catch {
          // the page itself is HTML
        }
        resolve({ status: res.statusCode!, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}
