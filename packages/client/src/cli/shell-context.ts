import { TemplateError } from './errors.js';

/**
 * Follows a `/bin/sh` command string as it is rendered, so a notification value can be quoted
 * for the exact context it lands in: bare words, single quotes, double quotes and `$( )`,
 * nested. Constructs whose quoting rules this scanner does not follow (here-documents,
 * arithmetic expansion, backticks, `case`) make every later notification value a refusal,
 * as do the places where even a quoted value would let the publisher choose the program or
 * the file: the command name, a redirection operand, directly after `$`, inside `${ }`.
 */

interface Frame {
  quote: 'none' | 'single' | 'double';
  /** Opened by `$(`: its closing `)` returns to the enclosing frame. */
  readonly substitution: boolean;
  parenDepth: number;
  word: string;
  commandPosition: boolean;
  pendingRedirect: boolean;
  comment: boolean;
  escapeNext: boolean;
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

function newFrame(substitution: boolean): Frame {
  return {
    quote: 'none',
    substitution,
    parenDepth: 0,
    word: '',
    commandPosition: true,
    pendingRedirect: false,
    comment: false,
    escapeNext: false,
  };
}

export function quoteBare(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export class ShellScanner {
  private readonly frames: Frame[] = [newFrame(false)];
  private refused: string | undefined;
  private braceDepth = 0;
  private lastChar = '';

  private get top(): Frame {
    return this.frames[this.frames.length - 1] as Frame;
  }

  feed(text: string): void {
    for (let i = 0; i < text.length; i += 1) {
      i += this.step(text, i);
      this.lastChar = text[i] ?? '';
    }
  }

  /** Quotes `value` for the current context, or refuses with the reason. */
  quote(value: string, context: string): string {
    const frame = this.top;
    const refuse = (reason: string): never => {
      throw new TemplateError('ValueAfterUnsupportedShellSyntax', context, reason);
    };
    if (this.refused) refuse(this.refused);
    if (this.lastChar === '$') refuse('directly after $');
    if (this.braceDepth > 0) refuse('inside ${ }');
    if (!frame.comment) {
      if (frame.pendingRedirect) refuse('redirection operand');
      if (frame.commandPosition && !ASSIGNMENT.test(frame.word.replace(/["']/g, ''))) refuse('command name');
    }
    frame.word += '_';
    this.lastChar = '';
    if (frame.quote === 'single') return value.replace(/'/g, `'\\''`);
    if (frame.quote === 'double') return value.replace(/[\\$`"]/g, (c) => `\\${c}`);
    return quoteBare(value);
  }

  /** Consumes text[i] (and any lookahead); returns how many extra characters it used. */
  private step(text: string, i: number): number {
    const frame = this.top;
    const c = text[i] as string;
    const next = text[i + 1];
    if (frame.quote === 'single') {
      if (c === "'") frame.quote = 'none';
      frame.word += c;
      return 0;
    }
    if (frame.escapeNext) {
      frame.escapeNext = false;
      frame.word += c;
      return 0;
    }
    if (frame.comment) {
      if (c === '\n') {
        frame.comment = false;
        frame.commandPosition = true;
      }
      return 0;
    }
    if (c === '\\') {
      frame.escapeNext = true;
      frame.word += c;
      return 0;
    }
    if (c === '`') {
      this.refused ??= 'backticks';
      return 0;
    }
    if (c === '$') return this.dollar(frame, next, text[i + 2]);
    if (frame.quote === 'double') {
      if (c === '"') frame.quote = 'none';
      else if (c === '}' && this.braceDepth > 0) this.braceDepth -= 1;
      frame.word += c;
      return 0;
    }
    return this.bare(frame, c, next);
  }

  private dollar(frame: Frame, next: string | undefined, after: string | undefined): number {
    if (next === '(' && after === '(') {
      this.refused ??= 'arithmetic expansion';
      return 2;
    }
    if (next === '(') {
      frame.word += '$(';
      this.frames.push(newFrame(true));
      return 1;
    }
    if (next === '{') {
      this.braceDepth += 1;
      frame.word += '${';
      return 1;
    }
    frame.word += '$';
    return 0;
  }

  private bare(frame: Frame, c: string, next: string | undefined): number {
    switch (c) {
      case ' ':
      case '\t':
        this.endWord(frame);
        return 0;
      case '\n':
        this.endWord(frame);
        frame.commandPosition = true;
        return 0;
      case '#':
        if (frame.word === '') frame.comment = true;
        else frame.word += c;
        return 0;
      case "'":
        frame.quote = 'single';
        frame.word += c;
        return 0;
      case '"':
        frame.quote = 'double';
        frame.word += c;
        return 0;
      case '<':
        if (next === '<') {
          this.refused ??= 'here-document';
          return 1;
        }
        this.redirect(frame);
        return 0;
      case '>':
        this.redirect(frame);
        return next === '>' || next === '&' || next === '|' ? 1 : 0;
      case ';':
      case '&':
      case '|':
        this.endWord(frame);
        frame.commandPosition = true;
        frame.pendingRedirect = false;
        return next === c ? 1 : 0;
      case '(':
        this.endWord(frame);
        frame.parenDepth += 1;
        frame.commandPosition = true;
        return 0;
      case ')':
        this.endWord(frame);
        if (frame.parenDepth > 0) frame.parenDepth -= 1;
        else if (frame.substitution) {
          this.frames.pop();
          this.top.word += ')';
        }
        return 0;
      case '}':
        if (this.braceDepth > 0) this.braceDepth -= 1;
        else frame.word += c;
        return 0;
      default:
        frame.word += c;
        return 0;
    }
  }

  private redirect(frame: Frame): void {
    // `2>` names a file descriptor, not an argument: drop it rather than end a word with it.
    if (/^\d+$/.test(frame.word)) frame.word = '';
    this.endWord(frame);
    frame.pendingRedirect = true;
  }

  private endWord(frame: Frame): void {
    if (frame.word === '') return;
    if (frame.pendingRedirect) frame.pendingRedirect = false;
    else if (frame.commandPosition) {
      if (frame.word === 'case') this.refused ??= 'case';
      if (!ASSIGNMENT.test(frame.word)) frame.commandPosition = false;
    }
    frame.word = '';
  }
}
