import { request } from 'undici';

export interface Answer {
  status: number;
  text: string;
}

/** A signed-in HTTP client of the running server: GETs that must answer 200, and any other request. */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly cookie: string,
  ) {}

  static async signIn(baseUrl: string, email: string, password: string): Promise<ApiClient> {
    const answer = await request(`${baseUrl}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    const text = await answer.body.text();
    if (answer.statusCode !== 200) throw new Error(`sign-in failed: ${answer.statusCode} ${text}`);
    const setCookie = answer.headers['set-cookie'];
    const lines = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
    const access = lines.map((line) => line.split(';')[0]!).find((pair) => pair.startsWith('svc_access_token='));
    if (!access) throw new Error('sign-in set no access cookie');
    return new ApiClient(baseUrl, access);
  }

  /** Any request with an optional JSON body: the status and the body as text, whatever the status. */
  async send(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<Answer> {
    const answer = await request(this.baseUrl + path, {
      method,
      headers:
        body === undefined ? { cookie: this.cookie } : { cookie: this.cookie, 'content-type': 'application/json' },
      body: body === undefined ? null : JSON.stringify(body),
    });
    return { status: answer.statusCode, text: await answer.body.text() };
  }

  /** The answer's body as text; anything but 200 is an error. */
  async get(path: string): Promise<string> {
    const answer = await request(this.baseUrl + path, { headers: { cookie: this.cookie } });
    const text = await answer.body.text();
    if (answer.statusCode !== 200) throw new Error(`GET ${path}: ${answer.statusCode} ${text.slice(0, 500)}`);
    return text;
  }
}
