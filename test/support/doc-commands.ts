/**
 * The `curl` commands of the documentation's shell blocks, read as a shell reads them and turned
 * into the HTTP requests curl would send, so a test can send them to a real server exactly as a
 * reader who copies them would (test/e2e/docs-examples.test.ts).
 */

export interface DocCommand {
  /** Repository-relative path of the page. */
  readonly page: string;
  /** 1-based line of the page where the command starts. */
  readonly line: number;
  /** The command as written (continuation lines joined). */
  readonly text: string;
  readonly words: readonly string[];
}

export interface CurlRequest {
  readonly method: string;
  /** As written, scheme added when missing (curl assumes http). */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
  /** `-N`: the answer is a stream, read as it comes. */
  readonly streaming: boolean;
}

/** Every command of every ```sh / ```bash / ```shell block of `markdown`, split into shell words. */
export function shellCommands(page: string, markdown: string): DocCommand[] {
  const commands: DocCommand[] = [];
  const lines = markdown.split('\n');
  let block: { start: number; text: string[] } | undefined;
  for (const [index, line] of lines.entries()) {
    if (block === undefined) {
      if (/^\s*```(sh|bash|shell)\s*$/.test(line)) block = { start: index + 2, text: [] };
      continue;
    }
    if (/^\s*```\s*$/.test(line)) {
      commands.push(...splitCommands(page, block.start, block.text.join('\n')));
      block = undefined;
      continue;
    }
    block.text.push(line);
  }
  return commands;
}

/**
 * A small POSIX shell reader: single and double quotes, backslash escapes and line continuations,
 * `#` comments, `$NAME` / `${NAME}` expanded from `env` (unset: empty, as a shell does), and
 * commands ended by a newline, `;` or `&` outside quotes. Enough for documentation examples; a
 * construct it does not know (`$(…)`, pipes, redirections) makes the command's words say so.
 */
export function splitCommands(page: string, firstLine: number, script: string, env: Readonly<Record<string, string>> = {}): DocCommand[] {
  const commands: DocCommand[] = [];
  let words: string[] = [];
  let word: string | undefined;
  let line = firstLine;
  let start = firstLine;
  let startOffset = 0;
  const end = (at: number): void => {
    if (word !== undefined) words.push(word);
    word = undefined;
    if (words.length > 0) commands.push({ page, line: start, text: script.slice(startOffset, at).trim(), words });
    words = [];
  };
  const expand = (at: number): { value: string; next: number } => {
    const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(script.slice(at));
    const plain = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(script.slice(at));
    const match = braced ?? plain;
    if (!match) return { value: '$', next: at + 1 };
    return { value: env[match[1]!] ?? '', next: at + match[0].length };
  };
  let i = 0;
  while (i < script.length) {
    const char = script[i]!;
    if (words.length === 0 && word === undefined && /\s/.test(char)) {
      if (char === '\n') line += 1;
      i += 1;
      start = line;
      startOffset = i;
      continue;
    }
    if (char === '\\' && script[i + 1] === '\n') {
      line += 1;
      i += 2;
      continue;
    }
    if (char === '\\') {
      word = (word ?? '') + (script[i + 1] ?? '');
      i += 2;
      continue;
    }
    if (char === "'") {
      const close = script.indexOf("'", i + 1);
      if (close < 0) throw new Error(`${page}:${line}: unclosed single quote`);
      const quoted = script.slice(i + 1, close);
      line += quoted.split('\n').length - 1;
      word = (word ?? '') + quoted;
      i = close + 1;
      continue;
    }
    if (char === '"') {
      let value = '';
      i += 1;
      while (i < script.length && script[i] !== '"') {
        if (script[i] === '\\' && /["\\$`\n]/.test(script[i + 1] ?? '')) {
          if (script[i + 1] !== '\n') value += script[i + 1];
          i += 2;
        } else if (script[i] === '$') {
          const { value: expanded, next } = expand(i);
          value += expanded;
          i = next;
        } else {
          if (script[i] === '\n') line += 1;
          value += script[i];
          i += 1;
        }
      }
      if (i >= script.length) throw new Error(`${page}:${line}: unclosed double quote`);
      word = (word ?? '') + value;
      i += 1;
      continue;
    }
    if (char === '$') {
      const { value, next } = expand(i);
      word = (word ?? '') + value;
      i = next;
      continue;
    }
    if (char === '#' && word === undefined) {
      while (i < script.length && script[i] !== '\n') i += 1;
      continue;
    }
    if (char === '\n' || char === ';' || char === '&') {
      end(i);
      if (char === '\n') line += 1;
      i += 1;
      start = line;
      startOffset = i;
      continue;
    }
    if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
      i += 1;
      continue;
    }
    word = (word ?? '') + char;
    i += 1;
  }
  end(script.length);
  return commands;
}

/** The request a `curl` command sends; an option this reader does not know throws, so a new kind of example is noticed. */
export function curlRequest(command: DocCommand): CurlRequest {
  const [program, ...args] = command.words;
  if (program !== 'curl') throw new Error(`${command.page}:${command.line}: not a curl command`);
  let method: string | undefined;
  let url: string | undefined;
  let body: string | undefined;
  let streaming = false;
  const headers: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = (): string => {
      const next = args[i + 1];
      if (next === undefined) throw new Error(`${command.page}:${command.line}: ${arg} needs a value`);
      i += 1;
      return next;
    };
    switch (arg) {
      case '-s':
      case '--silent':
      case '-S':
      case '-sS':
        break;
      case '-N':
      case '--no-buffer':
        streaming = true;
        break;
      case '-X':
      case '--request':
        method = value();
        break;
      case '-H':
      case '--header': {
        const header = value();
        const colon = header.indexOf(':');
        headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
        break;
      }
      case '-d':
      case '--data':
      case '--data-raw':
        // curl joins several -d values with '&'.
        body = body === undefined ? value() : `${body}&${value()}`;
        break;
      case '-u':
      case '--user':
        headers.authorization = `Basic ${Buffer.from(value()).toString('base64')}`;
        break;
      default:
        if (arg.startsWith('-')) throw new Error(`${command.page}:${command.line}: curl option ${arg} is not read by this test`);
        if (url !== undefined) throw new Error(`${command.page}:${command.line}: two URLs`);
        url = /^[a-z]+:\/\//.test(arg) ? arg : `http://${arg}`;
    }
  }
  if (url === undefined) throw new Error(`${command.page}:${command.line}: no URL`);
  // What curl itself sends with -d unless the command names another type.
  if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  return { method: method ?? (body === undefined ? 'GET' : 'POST'), url, headers, body, streaming };
}
