import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParams,
} from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { anthropicError, openAiErrorToAnthropic } from '../../server/gateway/translate/anthropic-errors.js';
import { chatAnswerToMessage } from '../../server/gateway/translate/chat-answer-to-message.js';
import type { ChatRequestBody } from '../../server/gateway/translate/chat-shapes.js';
import { translatedEvent } from '../../server/gateway/deliver.js';
import { SseEvents } from '../../server/gateway/sse-events.js';
import { ChatStreamToMessages } from '../../server/gateway/translate/chat-stream-to-messages.js';
import { messagesToChat } from '../../server/gateway/translate/messages-to-chat.js';

// Every body translated is a chat completions request as the `openai` package types one.
const _typed = (body: ChatRequestBody): ChatCompletionCreateParams => body;

const REFUSED = " is not available on this route: its targets speak only OpenAI's chat completions.";

/** A request as Claude Code sends one: cached system blocks, tools, an image, a tool round trip. */
const claudeCodeRequest = () => ({
  model: 'claude-sonnet-4-5-20250929',
  max_tokens: 32000,
  temperature: 1,
  system: [
    { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude." },
    {
      type: 'text',
      text: 'You are an interactive CLI tool that helps users with software engineering tasks.',
      cache_control: { type: 'ephemeral' },
    },
  ],
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: '<system-reminder>\nThe working directory is /repo.\n</system-reminder>' },
        { type: 'text', text: 'Which test fails in this screenshot?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgoAAAANSUhEUg==' } },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'The screenshot shows a failure in `add`. Let me run the test and read it.' },
        {
          type: 'tool_use',
          id: 'toolu_01Run',
          name: 'Bash',
          input: { command: 'npx vitest run test/add.test.ts', description: 'Run the failing test' },
        },
        { type: 'tool_use', id: 'toolu_01Read', name: 'Read', input: { file_path: '/repo/test/add.test.ts' } },
      ],
    },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_01Run',
          content: 'FAIL test/add.test.ts > adds\nExpected 3, received 4',
          is_error: true,
        },
        {
          type: 'tool_result',
          tool_use_id: 'toolu_01Read',
          content: [
            { type: 'text', text: "1\timport { add } from '../src/add';" },
            { type: 'text', text: '2\texpect(add(1, 2)).toBe(3);' },
          ],
          cache_control: { type: 'ephemeral' },
        },
        { type: 'text', text: 'The diagram may help:', cache_control: { type: 'ephemeral' } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/diagram.png' } },
      ],
    },
  ],
  tools: [
    {
      name: 'Bash',
      description: 'Executes a given bash command in a persistent shell session.',
      input_schema: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { command: { type: 'string' }, description: { type: 'string' } },
        required: ['command'],
        additionalProperties: false,
      },
    },
    {
      name: 'Read',
      description: 'Reads a file from the local filesystem.',
      input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
      cache_control: { type: 'ephemeral' },
    },
  ],
  metadata: { user_id: 'user_2f1c_account_9a7e_session_41bd' },
  stream: true,
});

/** The request, translated. */
const claudeCodeChat: ChatRequestBody = {
  model: 'gpt-4.1',
  max_completion_tokens: 32000,
  temperature: 1,
  messages: [
    {
      role: 'system',
      content: [
        { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude." },
        { type: 'text', text: 'You are an interactive CLI tool that helps users with software engineering tasks.' },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'text', text: '<system-reminder>\nThe working directory is /repo.\n</system-reminder>' },
        { type: 'text', text: 'Which test fails in this screenshot?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==' } },
      ],
    },
    {
      role: 'assistant',
      content: 'The screenshot shows a failure in `add`. Let me run the test and read it.',
      tool_calls: [
        {
          id: 'toolu_01Run',
          type: 'function',
          function: {
            name: 'Bash',
            arguments: '{"command":"npx vitest run test/add.test.ts","description":"Run the failing test"}',
          },
        },
        {
          id: 'toolu_01Read',
          type: 'function',
          function: { name: 'Read', arguments: '{"file_path":"/repo/test/add.test.ts"}' },
        },
      ],
    },
    {
      role: 'tool',
      tool_call_id: 'toolu_01Run',
      content: 'Error: FAIL test/add.test.ts > adds\nExpected 3, received 4',
    },
    {
      role: 'tool',
      tool_call_id: 'toolu_01Read',
      content: [
        { type: 'text', text: "1\timport { add } from '../src/add';" },
        { type: 'text', text: '2\texpect(add(1, 2)).toBe(3);' },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'The diagram may help:' },
        { type: 'image_url', image_url: { url: 'https://example.com/diagram.png' } },
      ],
    },
  ],
  tools: [
    {
      type: 'function',
      function: {
        name: 'Bash',
        description: 'Executes a given bash command in a persistent shell session.',
        parameters: {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: { command: { type: 'string' }, description: { type: 'string' } },
          required: ['command'],
          additionalProperties: false,
        },
      },
    },
    {
      type: 'function',
      function: {
        name: 'Read',
        description: 'Reads a file from the local filesystem.',
        parameters: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
      },
    },
  ],
  user: 'user_2f1c_account_9a7e_session_41bd',
  stream: true,
  stream_options: { include_usage: true },
};

const translated = (body: unknown) => {
  const result = messagesToChat(body, 'gpt-4.1');
  if (!result.ok) throw new Error(result.message);
  return result.body;
};

const refusal = (body: unknown) => {
  const result = messagesToChat(body, 'gpt-4.1');
  return result.ok ? null : result.message;
};

/** A short request with something changed. */
const simple = (changes: Record<string, unknown> = {}) => ({
  model: 'claude-haiku-4-5',
  max_tokens: 256,
  messages: [{ role: 'user', content: 'Hello' }],
  ...changes,
});

describe('messagesToChat', () => {
  it("translates Claude Code's request: system blocks, images, a tool round trip, tools, metadata, stream", () => {
    const chat = translated(claudeCodeRequest());
    expect(chat).toStrictEqual(claudeCodeChat);
    // cache_control is dropped everywhere, and nothing else of Anthropic's is left.
    expect(JSON.stringify(chat)).not.toContain('cache_control');
  });

  it('translates a plain request, with its sampling and stop sequences, and no stream', () => {
    expect(
      translated(
        simple({
          system: 'Be brief.',
          temperature: 0.2,
          top_p: 0.9,
          stop_sequences: ['\n\nHuman:', 'END'],
          stream: false,
          thinking: { type: 'disabled' },
          service_tier: 'standard_only',
          cache_control: { type: 'ephemeral' },
          top_k: null,
        }),
      ),
    ).toStrictEqual({
      model: 'gpt-4.1',
      max_completion_tokens: 256,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello' },
      ],
      stop: ['\n\nHuman:', 'END'],
      temperature: 0.2,
      top_p: 0.9,
    });
  });

  it('writes one text block as a string, several as parts, an empty system prompt as none', () => {
    const chat = translated(
      simple({
        system: [],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'one' }] },
          { role: 'assistant', content: 'two' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'three' },
              { type: 'text', text: 'four' },
            ],
          },
        ],
      }),
    );
    expect(chat.messages).toStrictEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'three' },
          { type: 'text', text: 'four' },
        ],
      },
    ]);
  });

  it('gives an assistant turn of tool calls alone null content, and an error result without text "Error"', () => {
    const chat = translated(
      simple({
        messages: [
          { role: 'user', content: 'List the files.' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'LS', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', is_error: true }] },
        ],
        tools: [{ name: 'LS', input_schema: { type: 'object' } }],
      }),
    );
    expect(chat.messages).toStrictEqual([
      { role: 'user', content: 'List the files.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'LS', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'Error' },
    ]);
    expect(chat.tools).toStrictEqual([{ type: 'function', function: { name: 'LS', parameters: { type: 'object' } } }]);
  });

  it('translates each tool_choice, and disable_parallel_tool_use as parallel_tool_calls false', () => {
    const tools = [{ name: 'get_weather', input_schema: { type: 'object' }, strict: true }];
    const choose = (tool_choice: unknown) => {
      const chat = translated(simple({ tools, tool_choice }));
      return { tool_choice: chat.tool_choice, parallel_tool_calls: chat.parallel_tool_calls };
    };
    expect(choose({ type: 'auto' })).toEqual({ tool_choice: 'auto' });
    expect(choose({ type: 'any' })).toEqual({ tool_choice: 'required' });
    expect(choose({ type: 'none' })).toEqual({ tool_choice: 'none' });
    expect(choose({ type: 'tool', name: 'get_weather', disable_parallel_tool_use: true })).toEqual({
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
    });
    expect(choose({ type: 'auto', disable_parallel_tool_use: true })).toEqual({
      tool_choice: 'auto',
      parallel_tool_calls: false,
    });
    expect(translated(simple({ tools })).tools).toStrictEqual([
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' }, strict: true } },
    ]);
    // Without tools there is nothing to choose: chat completions refuse a choice then.
    expect(translated(simple({ tool_choice: { type: 'auto' } })).tool_choice).toBeUndefined();
    expect(refusal(simple({ tool_choice: { type: 'any' } }))).toBe('tool_choice "any" needs tools.');
  });

  it('takes a system turn in the conversation as a system message', () => {
    const chat = translated(
      simple({
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'system', content: [{ type: 'text', text: 'Answer in French.' }] },
          { role: 'user', content: 'Bye' },
        ],
      }),
    );
    expect(chat.messages).toStrictEqual([
      { role: 'user', content: 'Hi' },
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'Bye' },
    ]);
  });

  const withBlock = (role: 'user' | 'assistant', block: unknown) =>
    simple({
      messages:
        role === 'user'
          ? [{ role, content: [{ type: 'text', text: 'Look:' }, block] }]
          : [
              { role: 'user', content: 'Think.' },
              { role, content: [block, { type: 'text', text: 'Done.' }] },
              { role: 'user', content: 'Go on.' },
            ],
    });

  it.each([
    ['thinking enabled', simple({ thinking: { type: 'enabled', budget_tokens: 2048 } }), 'thinking'],
    ['thinking adaptive', simple({ thinking: { type: 'adaptive' } }), 'thinking'],
    [
      'a thinking block',
      withBlock('assistant', { type: 'thinking', thinking: 'Hmm.', signature: 'EqQBCkYIARgCIkB' }),
      'messages.1.content.0 (a thinking block in an assistant turn)',
    ],
    [
      'a redacted_thinking block',
      withBlock('assistant', { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' }),
      'messages.1.content.0 (a redacted_thinking block in an assistant turn)',
    ],
    [
      'a web search server tool',
      simple({
        tools: [
          { name: 'x', input_schema: { type: 'object' } },
          { type: 'web_search_20250305', name: 'web_search' },
        ],
      }),
      "tools.1 (web_search_20250305, one of Anthropic's server tools)",
    ],
    [
      'the bash tool',
      simple({ tools: [{ type: 'bash_20250124', name: 'bash' }] }),
      "tools.0 (bash_20250124, one of Anthropic's server tools)",
    ],
    [
      'the text editor tool',
      simple({ tools: [{ type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' }] }),
      "tools.0 (text_editor_20250728, one of Anthropic's server tools)",
    ],
    [
      'a document block',
      withBlock('user', { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Hi' } }),
      'messages.0.content.1 (a document block in a user turn)',
    ],
    [
      'an image in a tool result',
      simple({
        messages: [
          { role: 'user', content: 'Screenshot?' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'shot', input: {} }] },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 't1',
                content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }],
              },
            ],
          },
        ],
      }),
      'messages.2.content.0.content.0 (an image in a tool_result)',
    ],
    [
      'an image from the Files API',
      withBlock('user', { type: 'image', source: { type: 'file', file_id: 'file_011CNha8iCJcU1wXNR6q4V8w' } }),
      'messages.0.content.1 (an image from the Files API)',
    ],
    [
      'citations',
      withBlock('user', {
        type: 'text',
        text: 'The grass is green.',
        citations: [
          { type: 'char_location', cited_text: 'green', document_index: 0, start_char_index: 0, end_char_index: 5 },
        ],
      }),
      'messages.0.content.1.citations',
    ],
    ['top_k', simple({ top_k: 40 }), 'top_k'],
    ['container', simple({ container: 'container_011CRb2Mk' }), 'container'],
    [
      'mcp_servers',
      simple({ mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'example' }] }),
      'mcp_servers',
    ],
    ['a field chat completions know nothing of', simple({ context_management: { edits: [] } }), 'context_management'],
    [
      'a last assistant turn to continue',
      simple({
        messages: [
          { role: 'user', content: 'Name a colour.' },
          { role: 'assistant', content: 'The colour is' },
        ],
      }),
      'messages.1 (a last assistant turn for the model to continue)',
    ],
    ['five stop sequences', simple({ stop_sequences: ['a', 'b', 'c', 'd', 'e'] }), 'stop_sequences beyond the 4th'],
    [
      'a server tool call in the history',
      withBlock('assistant', { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'x' } }),
      'messages.1.content.0 (a server_tool_use block in an assistant turn)',
    ],
  ])('refuses %s, naming it', (_name, body, what) => {
    expect(refusal(body)).toBe(what + REFUSED);
  });

  it('returns the first problem found: the fields, then thinking, then the conversation, then the tools', () => {
    const everything = simple({
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', data: 'x' } }] }],
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
    });
    expect(refusal({ ...everything, top_k: 5 })).toBe(`top_k${REFUSED}`);
    expect(refusal(everything)).toBe(`thinking${REFUSED}`);
    expect(refusal({ ...everything, thinking: undefined })).toBe(
      `messages.0.content.0 (a document block in a user turn)${REFUSED}`,
    );
    expect(refusal({ ...everything, thinking: undefined, messages: simple().messages })).toBe(
      `tools.0 (web_search_20250305, one of Anthropic's server tools)${REFUSED}`,
    );
  });

  it.each([
    ['a body that is not an object', [], 'The request body must be a JSON object.'],
    ['no max_tokens', { messages: [{ role: 'user', content: 'Hi' }] }, 'max_tokens must be a positive integer.'],
    ['no messages', simple({ messages: [] }), 'messages must be a non-empty array.'],
    [
      'a role of its own',
      simple({ messages: [{ role: 'tool', content: 'x' }] }),
      'messages.0.role must be "user" or "assistant".',
    ],
    [
      'a block without a type',
      simple({ messages: [{ role: 'user', content: [{ text: 'x' }] }] }),
      'messages.0.content.0 must be a content block with a type.',
    ],
    [
      'a tool call without input',
      withBlock('assistant', { type: 'tool_use', id: 't', name: 'n' }),
      'messages.1.content.0.input must be an object.',
    ],
    ['a tool without a schema', simple({ tools: [{ name: 'n' }] }), 'tools.0.input_schema must be an object.'],
    ['a temperature in words', simple({ temperature: 'hot' }), 'temperature must be a number.'],
  ])('refuses %s as malformed', (_name, body, message) => {
    expect(refusal(body)).toBe(message);
  });
});

/** A chat completion whose choice says something, then calls two tools at once. */
const toolAnswer = {
  id: 'chatcmpl-C3xq9',
  object: 'chat.completion',
  created: 1764676800,
  model: 'gpt-4.1-2025-04-14',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: "I'll check the weather in both cities.",
        refusal: null,
        tool_calls: [
          { id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          {
            id: 'call_tokyo',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Tokyo","unit":"c"}' },
          },
        ],
      },
      finish_reason: 'tool_calls',
      logprobs: null,
    },
  ],
  usage: {
    prompt_tokens: 1200,
    completion_tokens: 41,
    total_tokens: 1241,
    prompt_tokens_details: { cached_tokens: 1024 },
  },
} satisfies ChatCompletion;

const toolMessage = {
  id: 'msg_chatcmpl-C3xq9',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [
    { type: 'text', text: "I'll check the weather in both cities." },
    { type: 'tool_use', id: 'call_paris', name: 'get_weather', input: { city: 'Paris' } },
    { type: 'tool_use', id: 'call_tokyo', name: 'get_weather', input: { city: 'Tokyo', unit: 'c' } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 176, cache_creation_input_tokens: 0, cache_read_input_tokens: 1024, output_tokens: 41 },
};

const answerWith = (choice: Record<string, unknown>, message: Record<string, unknown> = {}) =>
  JSON.stringify({
    ...toolAnswer,
    choices: [
      { index: 0, finish_reason: 'stop', ...choice, message: { role: 'assistant', content: 'Hi.', ...message } },
    ],
  });

const message = (text: string | null) => (text === null ? null : JSON.parse(text));

describe('chatAnswerToMessage', () => {
  it('translates text and two tool calls, and the usage with its cached part', () => {
    expect(message(chatAnswerToMessage(JSON.stringify(toolAnswer), 'claude-sonnet-4-5'))).toStrictEqual(toolMessage);
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['function_call', 'tool_use'],
    ['content_filter', 'refusal'],
    [null, 'end_turn'],
  ])('gives finish_reason %s the stop_reason %s', (finish, stop) => {
    expect(message(chatAnswerToMessage(answerWith({ finish_reason: finish }), 'm'))).toMatchObject({
      stop_reason: stop,
      stop_sequence: null,
    });
  });

  it('says which stop sequence ended the message when the upstream names it (vLLM, SGLang), else end_turn', () => {
    const read = (choice: Record<string, unknown>, stopSequences?: string[]) =>
      message(chatAnswerToMessage(answerWith(choice), 'm', { stopSequences }));
    expect(read({ stop_reason: 'END' })).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'END' });
    expect(read({ matched_stop: 'END' }, ['END'])).toMatchObject({
      stop_reason: 'stop_sequence',
      stop_sequence: 'END',
    });
    // A stop token's number, or a string the request never asked to stop on, is the model's own end.
    expect(read({ stop_reason: 151645 })).toMatchObject({ stop_reason: 'end_turn', stop_sequence: null });
    expect(read({ stop_reason: 'eos' }, ['END'])).toMatchObject({ stop_reason: 'end_turn', stop_sequence: null });
  });

  it('gives a refusal as text with stop_reason refusal', () => {
    expect(
      message(chatAnswerToMessage(answerWith({}, { content: null, refusal: "I can't help with that." }), 'm')),
    ).toMatchObject({
      content: [{ type: 'text', text: "I can't help with that." }],
      stop_reason: 'refusal',
    });
  });

  it('gives arguments that are not a JSON object the input {}, and an empty answer no block', () => {
    const calls = [
      { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"city": "Par' } },
      { id: 'c2', type: 'function', function: { name: 'f', arguments: '[1, 2]' } },
      { id: 'c3', type: 'function', function: { name: 'f', arguments: '' } },
    ];
    expect(
      message(chatAnswerToMessage(answerWith({ finish_reason: 'length' }, { content: null, tool_calls: calls }), 'm'))
        .content,
    ).toStrictEqual([
      { type: 'tool_use', id: 'c1', name: 'f', input: {} },
      { type: 'tool_use', id: 'c2', name: 'f', input: {} },
      { type: 'tool_use', id: 'c3', name: 'f', input: {} },
    ]);
    expect(message(chatAnswerToMessage(answerWith({}, { content: '' }), 'm')).content).toStrictEqual([]);
  });

  it('counts no usage as zero, and is null for what is not a chat completion', () => {
    const bare = JSON.stringify({
      id: 'x',
      choices: [{ index: 0, message: { content: 'Hi' }, finish_reason: 'stop' }],
    });
    expect(message(chatAnswerToMessage(bare, 'm')).usage).toStrictEqual({
      input_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 0,
    });
    for (const text of [
      '<html>Bad gateway</html>',
      '[]',
      'null',
      '{"error":{"message":"x"}}',
      '{"choices":[]}',
      '{"choices":[{"index":0}]}',
    ]) {
      expect(chatAnswerToMessage(text, 'm')).toBeNull();
    }
  });
});

// A stream of the same answer as toolAnswer: text, then two parallel tool calls, then usage.
const base = {
  id: 'chatcmpl-C3xq9',
  object: 'chat.completion.chunk',
  created: 1764676800,
  model: 'gpt-4.1-2025-04-14',
} as const;
const chunk = (
  delta: ChatCompletionChunk.Choice.Delta,
  finish: ChatCompletionChunk.Choice['finish_reason'] = null,
): ChatCompletionChunk => ({
  ...base,
  choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  usage: null,
});
const toolStream: (ChatCompletionChunk | '[DONE]')[] = [
  chunk({ role: 'assistant', content: '', refusal: null }),
  chunk({ content: "I'll check" }),
  chunk({ content: ' the weather in both' }),
  chunk({ content: ' cities.' }),
  chunk({
    tool_calls: [{ index: 0, id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: '' } }],
  }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
  chunk({
    tool_calls: [{ index: 1, id: 'call_tokyo', type: 'function', function: { name: 'get_weather', arguments: '' } }],
  }),
  chunk({ tool_calls: [{ index: 1, function: { arguments: '{"city":"Tokyo",' } }] }),
  chunk({ tool_calls: [{ index: 1, function: { arguments: '"unit":"c"}' } }] }),
  chunk({}, 'tool_calls'),
  { ...base, choices: [], usage: toolAnswer.usage },
  '[DONE]',
];

interface Frame {
  event: string;
  data: any;
}

/** The frames of Anthropic's stream, each checked to be `event:` then `data:` then a blank line. */
function frames(sse: string): Frame[] {
  expect(sse.endsWith('\n\n') || sse === '').toBe(true);
  return sse
    .split('\n\n')
    .filter((text) => text !== '')
    .map((text) => {
      const [event, data, ...rest] = text.split('\n');
      expect(rest).toEqual([]);
      expect(event).toMatch(/^event: /);
      expect(data).toMatch(/^data: /);
      const parsed = JSON.parse(data!.slice('data: '.length));
      expect(parsed.type).toBe(event!.slice('event: '.length));
      return { event: event!.slice('event: '.length), data: parsed };
    });
}

/** The message a client builds of the frames, as Anthropic's SDK accumulates them (MessageStream). */
function accumulate(list: Frame[]): any {
  let snapshot: any = null;
  const json = new Map<number, string>();
  for (const { data: event } of list) {
    switch (event.type) {
      case 'message_start':
        expect(snapshot).toBeNull();
        snapshot = structuredClone(event.message);
        break;
      case 'content_block_start':
        expect(snapshot.content.length).toBe(event.index);
        snapshot.content.push(structuredClone(event.content_block));
        break;
      case 'content_block_delta': {
        const block = snapshot.content.at(event.index);
        if (event.delta.type === 'text_delta') block.text += event.delta.text;
        else json.set(event.index, (json.get(event.index) ?? '') + event.delta.partial_json);
        break;
      }
      case 'content_block_stop':
        if (json.has(event.index)) snapshot.content[event.index].input = JSON.parse(json.get(event.index)!);
        break;
      case 'message_delta':
        snapshot.stop_reason = event.delta.stop_reason;
        snapshot.stop_sequence = event.delta.stop_sequence;
        snapshot.usage.output_tokens = event.usage.output_tokens;
        for (const key of ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens']) {
          if (event.usage[key] !== undefined && event.usage[key] !== null) snapshot.usage[key] = event.usage[key];
        }
        break;
      case 'message_stop':
      case 'ping':
        break;
      default:
        throw new Error(`unexpected ${event.type}`);
    }
  }
  return snapshot;
}

const translateStream = (chunks: unknown[], translator = new ChatStreamToMessages('claude-sonnet-4-5')) => {
  const sent = chunks.map((data) => translator.push(data));
  return { translator, sent, sse: sent.join('') };
};

describe('ChatStreamToMessages', () => {
  it('translates text then two parallel tool calls, and waits for the usage after finish_reason', () => {
    const { translator, sent, sse } = translateStream(
      toolStream,
      new ChatStreamToMessages('claude-sonnet-4-5', { inputTokensEstimate: 1300 }),
    );
    const start = {
      type: 'message_start',
      message: {
        id: 'msg_chatcmpl-C3xq9',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 1300, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
      },
    };
    const text = (index: number, value: string) => ({
      type: 'content_block_delta',
      index,
      delta: { type: 'text_delta', text: value },
    });
    const json = (index: number, value: string) => ({
      type: 'content_block_delta',
      index,
      delta: { type: 'input_json_delta', partial_json: value },
    });
    expect(frames(sse).map((frame) => frame.data)).toStrictEqual([
      start,
      { type: 'ping' },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      text(0, "I'll check"),
      text(0, ' the weather in both'),
      text(0, ' cities.'),
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'call_paris', name: 'get_weather', input: {} },
      },
      json(1, '{"city":'),
      json(1, '"Paris"}'),
      { type: 'content_block_stop', index: 1 },
      {
        type: 'content_block_start',
        index: 2,
        content_block: { type: 'tool_use', id: 'call_tokyo', name: 'get_weather', input: {} },
      },
      json(2, '{"city":"Tokyo",'),
      json(2, '"unit":"c"}'),
      { type: 'content_block_stop', index: 2 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { input_tokens: 176, cache_creation_input_tokens: 0, cache_read_input_tokens: 1024, output_tokens: 41 },
      },
      { type: 'message_stop' },
    ]);
    // Nothing waits on the first chunk; the finish waits for the usage, which ends the message; [DONE] adds nothing.
    expect(frames(sent[0]!).map((frame) => frame.event)).toEqual(['message_start', 'ping']);
    expect(frames(sent[10]!).map((frame) => frame.event)).toEqual(['content_block_stop']);
    expect(frames(sent[11]!).map((frame) => frame.event)).toEqual(['message_delta', 'message_stop']);
    expect(sent[12]).toBe('');
    expect(translator.facts).toStrictEqual({
      usage: { prompt: 1200, completion: 41, cachedPrompt: 1024, cacheWrite: 0 },
      generatedCharacters:
        "I'll check the weather in both cities.".length +
        2 * 'get_weather'.length +
        '{"city":"Paris"}{"city":"Tokyo","unit":"c"}'.length,
      finishReason: 'tool_calls',
      started: true,
      ended: true,
    });
  });

  it('gives the text deltas the gateway reads by their text alone the events it gives them parsed', () => {
    const events = new SseEvents();
    const read = toolStream.map((data) =>
      events.read(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`),
    );
    // The first chunk (whose id the message takes) and the text after it; no call, finish or usage.
    expect(read.map((event) => event.plain)).toEqual([true, true, true, true, ...toolStream.slice(4).map(() => false)]);
    const translator = new ChatStreamToMessages('claude-sonnet-4-5', { inputTokensEstimate: 1300 });
    const parsed = translateStream(
      toolStream,
      new ChatStreamToMessages('claude-sonnet-4-5', { inputTokensEstimate: 1300 }),
    );
    expect(read.map((event) => translatedEvent(translator, event))).toStrictEqual(parsed.sent);
    expect(translator.facts).toStrictEqual(parsed.translator.facts);
    // A text delta is written byte for byte as any other event is: its JSON as JSON.stringify writes it.
    const delta = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' cities.' } };
    expect(parsed.sent[3]).toBe(`event: content_block_delta\ndata: ${JSON.stringify(delta)}\n\n`);
  });

  it('streams what the answer gives unstreamed: the same text, calls, stop and usage', () => {
    const streamed = accumulate(frames(translateStream(toolStream).sse));
    expect(streamed).toStrictEqual(message(chatAnswerToMessage(JSON.stringify(toolAnswer), 'claude-sonnet-4-5')));
    const texts = frames(translateStream(toolStream).sse)
      .filter((frame) => frame.data.delta?.type === 'text_delta')
      .map((frame) => frame.data.delta.text);
    expect(texts.join('')).toBe(toolAnswer.choices[0]!.message.content);
  });

  it('ends at [DONE] when no usage came, with output_tokens 0 and the estimate standing', () => {
    const { sse, translator } = translateStream([
      chunk({ role: 'assistant', content: 'Hello' }),
      chunk({ content: ' there.' }, 'stop'),
      '[DONE]',
    ]);
    const list = frames(sse);
    expect(list.map((frame) => frame.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(list[6]!.data).toStrictEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 0 },
    });
    expect(accumulate(list).content).toStrictEqual([{ type: 'text', text: 'Hello there.' }]);
    expect(translator.facts).toMatchObject({ usage: null, generatedCharacters: 12, ended: true });
  });

  it('ends at once when the usage comes with finish_reason, and names a stop sequence the upstream names', () => {
    const translator = new ChatStreamToMessages('m', { stopSequences: ['###'] });
    const last = {
      ...base,
      choices: [{ index: 0, delta: {}, finish_reason: 'stop', stop_reason: '###' }],
      usage: { prompt_tokens: 10, completion_tokens: 2 },
    };
    const sent = [chunk({ content: 'ok' }), last].map((data) => translator.push(data));
    expect(frames(sent[1]!).map((frame) => frame.data)).toStrictEqual([
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'stop_sequence', stop_sequence: '###' },
        usage: { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 2 },
      },
      { type: 'message_stop' },
    ]);
    expect(translator.push('[DONE]')).toBe('');
  });

  it('streams a refusal as text with stop_reason refusal, as unstreamed', () => {
    const { sse } = translateStream([
      chunk({ role: 'assistant', refusal: "I can't" }),
      chunk({ refusal: ' help.' }, 'stop'),
      '[DONE]',
    ]);
    expect(accumulate(frames(sse))).toMatchObject({
      content: [{ type: 'text', text: "I can't help." }],
      stop_reason: 'refusal',
    });
  });

  it('reports a cut stream as an error event, and sends nothing after it', () => {
    const translator = new ChatStreamToMessages('m');
    translator.push(chunk({ content: 'Half' }));
    expect(frames(translator.end())).toStrictEqual([
      {
        event: 'error',
        data: {
          type: 'error',
          error: { type: 'api_error', message: 'The upstream ended its stream before the answer was complete.' },
        },
      },
    ]);
    expect(translator.push(chunk({ content: 'more' }))).toBe('');
    expect(translator.push('[DONE]')).toBe('');
    expect(translator.facts).toMatchObject({ ended: true, finishReason: null, generatedCharacters: 4 });

    const timedOut = new ChatStreamToMessages('m');
    expect(timedOut.error('The upstream took too long.', 'timeout_error')).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"timeout_error","message":"The upstream took too long."}}\n\n',
    );
  });

  it("hands on an upstream's error chunk as an error event", () => {
    const { sse } = translateStream([
      chunk({ content: 'Hi' }),
      { error: { message: 'Internal server error', type: 'server_error' } },
    ]);
    expect(frames(sse).at(-1)).toStrictEqual({
      event: 'error',
      data: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } },
    });
  });

  it('ends a stream that finished but never sent [DONE]', () => {
    const translator = new ChatStreamToMessages('m');
    translator.push(chunk({ content: 'Hi' }, 'length'));
    expect(frames(translator.end()).map((frame) => frame.data)).toStrictEqual([
      { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 0 } },
      { type: 'message_stop' },
    ]);
  });
});

describe('errors in Anthropic’s shape', () => {
  it.each([
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [402, 'billing_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [408, 'invalid_request_error'],
    [413, 'request_too_large'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [502, 'api_error'],
    [503, 'overloaded_error'],
    [504, 'timeout_error'],
    [529, 'overloaded_error'],
  ])('gives %i the type %s', (status, type) => {
    expect(anthropicError(status, 'Something.')).toStrictEqual({
      type: 'error',
      error: { type, message: 'Something.' },
    });
  });

  it('translates an OpenAI error, keeping its message', () => {
    expect(
      openAiErrorToAnthropic(429, {
        error: {
          message: 'The upstream is rate limiting requests; try again later.',
          type: 'upstream_error',
          code: 'upstream_error',
        },
      }),
    ).toStrictEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'The upstream is rate limiting requests; try again later.' },
    });
    expect(openAiErrorToAnthropic(500, { error: { message: '' } })).toStrictEqual({
      type: 'error',
      error: { type: 'api_error', message: 'The request failed (HTTP 500).' },
    });
  });
});
