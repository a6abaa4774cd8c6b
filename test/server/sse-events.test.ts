import { describe, expect, it } from 'vitest';
import { messagesApi } from '../../server/gateway/apis/messages.js';
import { responsesApi } from '../../server/gateway/apis/responses.js';
import {
  SseEvents,
  UpstreamTooLarge,
  eventData,
  mayCarryUsage,
  newEvent,
  takenByText,
  type SseEvent,
} from '../../server/gateway/sse-events.js';

const delta = (content: string) =>
  `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] })}\n\n`;
const usage = `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 4 } } })}\n\n`;

/** The events a chunk completes, each read. */
const push = (events: SseEvents, chunk: Buffer) => events.cut(chunk).map((raw) => events.read(raw));

describe("the gateway's reading of an upstream's server-sent events", () => {
  it('cuts a chunk of many events at their blank lines, handing each on byte for byte', () => {
    const events = new SseEvents();
    const sent = delta('Hello') + delta(', world') + usage + 'data: [DONE]\n\n';
    const read = push(events, Buffer.from(sent));
    expect(read.map((event) => event.raw).join('')).toBe(sent);
    expect(read.map((event) => event.content)).toEqual(['Hello', ', world', '', '']);
    expect(read[2]).toMatchObject({ usageOnly: true, usage: { prompt: 9, completion: 3, cachedPrompt: 4 } });
    expect(events.done).toBe(true);
  });

  it('keeps an event split across chunks (inside a character too) until its blank line arrives', () => {
    const events = new SseEvents();
    const bytes = Buffer.from(delta('Grüße') + delta('!'));
    const cut = bytes.indexOf(0xc3) + 1; // between the two bytes of ü
    expect(push(events, bytes.subarray(0, cut))).toEqual([]);
    expect(push(events, bytes.subarray(cut, cut + 5)).map((event) => event.content)).toEqual([]);
    expect(push(events, bytes.subarray(cut + 5)).map((event) => event.content)).toEqual(['Grüße', '!']);
  });

  it('reads CRLF lines, comments and data over several lines, and a last event without its blank line', () => {
    const events = new SseEvents();
    const split = JSON.stringify({ choices: [{ delta: { content: 'two lines' } }] });
    const read = push(
      events,
      Buffer.from(
        `: keep-alive\r\n\r\ndata: ${JSON.stringify({ choices: [{ delta: { content: 'crlf' } }] })}\r\n\r\n` +
          `data: ${split.slice(0, 10)}\ndata: ${split.slice(10)}\n\n`,
      ),
    );
    // Two data lines join with a newline, which JSON allows between tokens.
    expect(read.map((event) => event.content)).toEqual(['', 'crlf', 'two lines']);
    expect(push(events, Buffer.from('data: [DONE]'))).toEqual([]);
    const last = events.end();
    expect(last).toEqual(['data: [DONE]']);
    events.read(last[0]!);
    expect(events.done).toBe(true);
  });

  it('reads the data after an `event:` line as line by line, however the event is written', () => {
    // The reading the spec describes: every `data:` line's value, joined by line breaks.
    const byLines = (raw: string) =>
      raw
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
    const raws = [
      'event: message_start\ndata: {"type":"message_start"}\n\n',
      'event: ping\r\ndata: {"type":"ping"}\r\n\r\n',
      'event: x\ndata: {"a":\ndata: 1}\n\n',
      'event: x\n: a comment\ndata: after\n\n',
      'event: x\ndata:   spaced\n\n',
      'event: x\ndata: {"text":"a\rb"}\n\n',
      'data:tight\n\n',
      'event: x\ndata: y\nid: 3\n\n',
      'event: x\ndata: last, no blank line',
      'event: x\n\n',
      'event: data:\n\n',
    ];
    for (const raw of raws) expect([raw, eventData(raw)]).toEqual([raw, byLines(raw)]);
    const text = JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } });
    const read = new SseEvents(messagesApi.streamReader()).read(`event: content_block_delta\ndata: ${text}\n\n`);
    expect(read).toMatchObject({ content: 'hi', malformed: false });
  });

  it("reads each delta's text exactly, escapes and all, however the chunk is written", () => {
    const events = new SseEvents();
    const chunks = [
      { choices: [{ index: 0, delta: { role: 'assistant', content: null } }] },
      { choices: [{ index: 0, delta: { content: 'She said "hi"\\ then\nleft: café ☕' } }] },
      {
        choices: [
          { index: 0, delta: { content: 'one' } },
          { index: 1, delta: { content: 'two' } },
        ],
      },
      { choices: [{ index: 0, delta: { tool_calls: [{ function: { arguments: '{"content":"not text"}' } }] } }] },
    ];
    const compact = chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('');
    const spaced = chunks.map((chunk) => `data: ${JSON.stringify(chunk, null, 1).replace(/\n/g, ' ')}\n\n`).join('');
    const expected = ['', 'She said "hi"\\ then\nleft: café ☕', 'onetwo', ''];
    expect(push(events, Buffer.from(compact)).map((event) => event.content)).toEqual(expected);
    expect(push(events, Buffer.from(spaced)).map((event) => event.content)).toEqual(expected);
    // The tool call's arguments are generated characters too, if not text.
    expect(push(events, Buffer.from(compact)).map((event) => event.otherCharacters)).toEqual([0, 0, 0, 22]);
    // What a translation may take by its text alone (`plain`): not a second choice, nor a call.
    expect(push(events, Buffer.from(compact)).map(takenByText)).toEqual([true, true, false, false]);
  });

  it('takes by its text alone only a delta of the first choice that says nothing else', () => {
    const events = new SseEvents();
    const plain = (chunk: object) => takenByText(events.read(`data: ${JSON.stringify(chunk)}\n\n`));
    expect(plain({ choices: [{ index: 0, delta: { content: 'text' }, finish_reason: null }] })).toBe(true);
    expect(plain({ choices: [{ delta: { content: 'unnumbered' } }] })).toBe(true);
    expect(plain({ choices: [{ index: 1, delta: { content: 'second' } }] })).toBe(false);
    expect(plain({ choices: [{ index: 0, delta: { content: 'last' }, finish_reason: 'stop' }] })).toBe(false);
    expect(plain({ error: { message: 'overloaded' }, choices: [{ index: 0, delta: { content: 'x' } }] })).toBe(false);
    expect(plain({ choices: [{ index: 0, delta: { content: 'x' } }], usage: { prompt_tokens: 1 } })).toBe(false);
  });

  it('reads a refusal, a choice that ends and an error however the chunk writes them, and text that only quotes their keys as text', () => {
    const events = new SseEvents();
    const read = (chunk: object) => {
      const event = events.read(`data: ${JSON.stringify(chunk)}\n\n`);
      return [event.content, event.otherCharacters, event.finished, event.error, event.plain];
    };
    const choice = (fields: object) => ({ choices: [{ index: 0, finish_reason: null, ...fields }] });
    // Keys that are named inside a text are escaped there: the text is still a plain delta.
    const quoting = 'the "error", "refusal":"no" and "finish_reason":"stop" of "tool_calls"';
    expect(read(choice({ delta: { content: quoting } }))).toEqual([quoting, 0, false, false, true]);
    expect(read(choice({ delta: { refusal: 'I cannot.' } }))).toEqual(['', 9, false, false, false]);
    expect(read(choice({ delta: { content: 'and ', refusal: 'no' } }))).toEqual(['and ', 2, false, false, false]);
    expect(read(choice({ delta: { content: 'end' }, finish_reason: 'length' }))).toEqual([
      'end',
      0,
      true,
      false,
      false,
    ]);
    expect(read({ ...choice({ delta: { content: 'x' } }), error: 'overloaded' })).toEqual(['x', 0, false, true, false]);
    // An `"error"` that is a value, not a key, is no error; such a chunk is read whole, as any that names one.
    expect(read(choice({ delta: { content: 'y' }, kind: 'error' }))).toEqual(['y', 0, false, false, false]);
  });

  it('reads an event in the frame of the plain delta before it exactly as it reads it alone', () => {
    // A stream's deltas share a frame (id, model, choice, nulls): an event that is the last plain
    // delta's frame around another text is read by it. Whatever an event is, the frame read and
    // a reading that never saw a plain delta must agree.
    const frame = (text: string, tail = '"},"logprobs":null,"finish_reason":null}]}') =>
      `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"${text}${tail}\n\n`;
    const OBJECT = '"object":"chat.completion.chunk"';
    const ends = frame('ends', '"},"logprobs":null,"finish_reason":"stop"}]}');
    const twoChoices = frame('one', '"},"logprobs":null,"finish_reason":null},{"index":1,"delta":{"content":"two"}}]}');
    const withUsage = frame(
      'first',
      '"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":3,"completion_tokens":1}}',
    );
    const events = [
      frame('plain text'),
      frame('quotes \\"error\\" and \\"usage\\":{} and \\"finish_reason\\":\\"stop\\" as text'),
      frame('caf\\u00e9 \\ud83d\\ude00 line\\nbreak'),
      frame(''),
      frame('a control character \u0001 unescaped'),
      frame('a bad escape \\x'),
      frame('no end', ''),
      frame('cut', '"},"logprobs":null,"finish_reason":null}]'),
      ends,
      twoChoices,
      withUsage,
      frame('text', '", "logprobs":null,"finish_reason":null}]}'),
      frame('split "', '"},"logprobs":null,"finish_reason":null}]}'),
      // Keys after the text where the frame has more of it: the frame's end is not where the text ends.
      frame('x","refusal":"no'),
      frame('x","tool_calls":[{"function":{"arguments":"{}"}}],"content":"y'),
      // Another frame before the text, the same after it, of another length or of the same.
      frame('x').replace('"delta":{"content"', '"delta":{"refusal":"no","content"'),
      frame('x').replace(OBJECT, '"error":"overloaded"'.padEnd(OBJECT.length, ' ')),
      // The same data written as another event: the frame is the event as received, lines and all.
      frame('x').replace(/\n\n$/, '\r\n\r\n'),
      frame('x').replace('data: ', 'data:'),
      `event: delta\n${frame('x')}`,
      `: ping\n${frame('x')}`,
      frame('x').replace(/\n\n$/, '\ndata: "},"logprobs":null,"finish_reason":null}]}\n\n'),
    ];
    const readAlone = (raw: string) => new SseEvents().read(raw);
    const primed = new SseEvents();
    // A frame of an event written with CRLF lines, or after a comment, frames events written so.
    const crlf = (raw: string) => raw.replace(/\n/g, '\r\n');
    for (const framing of [
      frame('sets the frame'),
      crlf(frame('sets the frame')),
      `: ping\n${frame('sets the frame')}`,
    ]) {
      for (const raw of [...events, ...events.map(crlf), ...events.map((event) => `: ping\n${event}`)]) {
        primed.read(framing);
        expect(primed.read(raw)).toEqual(readAlone(raw));
      }
    }
    // A delta of two texts frames neither: the second would be left out.
    const two = (text: string) => frame(text, '"}},{"index":1,"delta":{"content":"two"}}]}');
    primed.read(two('one'));
    expect(primed.read(two('three'))).toMatchObject({ content: 'threetwo' });
    // And each read so says what it should.
    expect(primed.read(frame('caf\\u00e9'))).toMatchObject({ content: 'café', plain: true, malformed: false });
    expect(primed.read(frame('no end', ''))).toMatchObject({ malformed: true });
    expect(primed.read(ends)).toMatchObject({ content: 'ends', finished: true, plain: false });
    expect(primed.read(twoChoices)).toMatchObject({ content: 'onetwo' });
    expect(primed.read(withUsage).usage).toMatchObject({ prompt: 3, completion: 1 });
    expect(primed.read(frame('x","refusal":"no'))).toMatchObject({ content: 'x', otherCharacters: 2, plain: false });
  });

  it('tells the usage that counts from the `usage: null` OpenAI puts on every chunk, and from text that quotes it', () => {
    const events = new SseEvents();
    const withNull = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'a' } }], usage: null })}\n\n`;
    const quoting = delta('say "usage":{ here');
    const spacedUsage = `data: ${JSON.stringify(JSON.parse(usage.slice(6)), null, 1).replace(/\n/g, ' ')}\n\n`;
    const splitUsage = usage.replace('"usage":', '"usage":\ndata: ');
    expect([withNull, quoting, usage, spacedUsage, splitUsage].map(mayCarryUsage)).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
    const read = push(events, Buffer.from(withNull + quoting + spacedUsage + splitUsage));
    expect(read.map((event) => [event.content, event.usage?.prompt ?? null, event.usageOnly])).toEqual([
      ['a', null, false],
      ['say "usage":{ here', null, false],
      ['', 9, true],
      ['', 9, true],
    ]);
  });

  it('finds every blank line however the chunks split it, one byte at a time included', () => {
    const sent = [`data: {"choices":[{"delta":{"content":"a"}}]}\r\n\r\n`, 'data: [DONE]\n\n', ': note\r\n\r\n'];
    const whole = Buffer.from(sent.join('') + delta('b'));
    for (const size of [1, 2, 3, 5, 7]) {
      const events = new SseEvents();
      const cut: string[] = [];
      for (let at = 0; at < whole.length; at += size) cut.push(...events.cut(whole.subarray(at, at + size)));
      expect(cut).toEqual([...sent, delta('b')]);
    }
  });

  it("gives each cut's events together as received, an event held over chunks and the last one included", () => {
    const sent = [delta('Grüße'), usage, 'event: x\r\ndata: {}\r\n\r\n', delta('!'), 'data: [DONE]'];
    const whole = Buffer.from(sent.join(''));
    for (const size of [1, 4, 9, 40, 100, whole.length]) {
      const events = new SseEvents();
      const texts: string[] = [];
      for (let at = 0; at < whole.length; at += size) {
        const cut = events.cut(whole.subarray(at, at + size));
        expect(events.text).toBe(cut.join(''));
        texts.push(events.text);
      }
      const last = events.end();
      expect(events.text).toBe(last.join(''));
      expect(texts.join('') + events.text).toBe(sent.join(''));
    }
  });

  it('refuses an event past its bound, however it arrives, and cuts events up to it as before', () => {
    const bound = 1000;
    const fits = delta('z'.repeat(bound - 200));
    const events = new SseEvents(null, bound);
    expect(events.cut(Buffer.from(fits + fits))).toEqual([fits, fits]);
    const tooLong = Buffer.from(delta('z'.repeat(bound)));
    expect(() => new SseEvents(null, bound).cut(tooLong)).toThrow(UpstreamTooLarge);
    const inPieces = new SseEvents(null, bound);
    expect(() => {
      for (let at = 0; at < tooLong.length; at += 10) inPieces.cut(tooLong.subarray(at, at + 10));
    }).toThrow(UpstreamTooLarge);
  });

  describe("Messages' and Responses' text deltas, read by their text where they are written as those APIs write them", () => {
    const TEXT = 'She said "hi"\\ then\nleft: café ☕ \u2028';
    const blank = () => newEvent('');
    /** What the event reads as through the gateway's reading, and as its reader reads it parsed whole. */
    const both = (api: typeof messagesApi, data: string) => {
      const read = new SseEvents(api.streamReader()).read(`data: ${data}\n\n`);
      let parsed: SseEvent | null = blank();
      try {
        api.streamReader()!.read(JSON.parse(data), parsed);
      } catch {
        parsed = null;
      }
      return { read, parsed, skimmed: api.streamReader()!.skim!(data, blank()) };
    };

    /** Each event reads as parsed whole; those of `skimmed` without a parse, those of `parsedWhole` parsed. */
    const expectReadAsParsed = (api: typeof messagesApi, skimmed: string[], parsedWhole: string[]) => {
      for (const [list, skims] of [
        [skimmed, true],
        [parsedWhole, false],
      ] as const) {
        for (const data of list) {
          const { read, parsed, skimmed } = both(api, data);
          expect(skimmed).toBe(skims);
          expect([read.content, read.otherCharacters]).toEqual([parsed!.content, parsed!.otherCharacters]);
        }
      }
    };

    it('reads an Anthropic text delta unparsed, exactly, and any other event as parsed whole', () => {
      const skimmed = [
        JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: TEXT } }),
        JSON.stringify({ type: 'content_block_delta', index: 12, delta: { type: 'text_delta', text: 'plain' } }),
        JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '' } }),
      ];
      const parsedWhole = [
        JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } }),
        JSON.stringify({
          type: 'content_block_delta',
          index: 1,
          delta: { type: 'input_json_delta', partial_json: '{"a' },
        }),
        // Another order, another index, or anything after the text: read whole.
        JSON.stringify({ index: 0, type: 'content_block_delta', delta: { text: 'reordered', type: 'text_delta' } }),
        JSON.stringify({
          type: 'content_block_delta',
          index: '0',
          delta: { type: 'text_delta', text: 'quoted index' },
        }),
        JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'a', more: 'b' } }),
        JSON.stringify({
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: 'a' },
          x: { text: 'b' },
        }),
      ];
      expectReadAsParsed(messagesApi, skimmed, parsedWhole);
      expect(both(messagesApi, skimmed[0]!).read.content).toBe(TEXT);
      // A control character inside the text is not JSON: malformed, as it was when parsed whole.
      const raw = skimmed[1]!.replace('plain', 'pl\u0001ain');
      expect(both(messagesApi, raw)).toMatchObject({ parsed: null, skimmed: false, read: { malformed: true } });
    });

    it('reads a Responses text delta unparsed, exactly, and any other event as parsed whole', () => {
      const at = { sequence_number: 4, item_id: 'msg_1', output_index: 0, content_index: 0 };
      const type = 'response.output_text.delta';
      const skimmed = [
        JSON.stringify({ type, ...at, delta: TEXT, logprobs: [] }),
        JSON.stringify({ type, ...at, delta: 'then', logprobs: [], obfuscation: 'xYz' }),
        JSON.stringify({ type, delta: '' }),
      ];
      const parsedWhole = [
        JSON.stringify({ type: 'response.reasoning_summary_text.delta', ...at, delta: 'thinking' }),
        JSON.stringify({ type, ...at, delta: null }),
        // A `delta` inside another object, before the event's own or alone, or the type not first.
        JSON.stringify({ type, meta: { delta: 'nested' }, delta: 'own' }),
        JSON.stringify({ type, ...at, meta: { delta: 'nested only' } }),
        JSON.stringify({ ...at, type, delta: 'type later' }),
      ];
      expectReadAsParsed(responsesApi, skimmed, parsedWhole);
      expect(both(responsesApi, skimmed[0]!).read.content).toBe(TEXT);
      expect(both(responsesApi, parsedWhole[2]!).read.content).toBe('own');
      expect(both(responsesApi, parsedWhole[3]!).read.content).toBe('');
    });
  });
});
