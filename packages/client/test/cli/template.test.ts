import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { TemplateError } from '../../src/cli/errors.js';
import { parseTemplate, percentEncode, renderTemplate } from '../../src/cli/template.js';

const n = {
  event_type: 'mars',
  sequence: 42,
  identifier: { class: 'od', date: '20260601' },
  payload: { seed: 'x', v: "a'b$(x)", nested: { deep: true }, none: null },
};
const env = { API_TOKEN: 'tok en', WEBHOOK_URL: 'https://hooks.example/notify?token=xxx' };

function kind(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof TemplateError) return error.kind;
    throw error;
  }
  return 'ok';
}

/** What /bin/sh passes as arguments to `printf '%s\n'`, one per line. */
function shellArgs(command: string): string[] {
  return execFileSync('/bin/sh', ['-c', `set -- ${command}; printf '%s\\n' "$@"`], { encoding: 'utf8' })
    .split('\n')
    .slice(0, -1);
}

describe('template values (plain)', () => {
  const plain = (t: string): string => renderTemplate(t, n, env, 'plain', 'test').text;
  it('renders strings unquoted, numbers, null, objects as compact JSON', () => {
    expect(plain('{{ notification.event_type }}')).toBe('mars');
    expect(plain('{{notification.sequence}}')).toBe('42');
    expect(plain('{{ notification.identifier.class }}')).toBe('od');
    expect(plain('{{ notification.identifier }}')).toBe('{"class":"od","date":"20260601"}');
    expect(plain('{{ notification.payload.none }}')).toBe('null');
    expect(plain('{{ notification.payload.nested.deep }}')).toBe('true');
    expect(JSON.parse(plain('{{ notification }}'))).toEqual(n);
  });
  it('inserts env values as written and escapes \\{{', () => {
    expect(plain('Bearer {{ env.API_TOKEN }}')).toBe('Bearer tok en');
    expect(plain('\\{{ literal }}')).toBe('{{ literal }}');
  });
  it('names each failure kind', () => {
    expect(kind(() => plain('{{ notification.identifier.nonexistent }}'))).toBe('Missing');
    expect(kind(() => plain('{{ env.UNDEFINED_VAR }}'))).toBe('EnvNotSet');
    expect(kind(() => parseTemplate('{{ unclosed', 't'))).toBe('BadSyntax');
    expect(kind(() => parseTemplate('{{ notification..empty }}', 't'))).toBe('BadSyntax');
    expect(kind(() => parseTemplate('{{ unknown.foo }}', 't'))).toBe('BadSyntax');
  });
  it('never echoes the template in the error message', () => {
    expect(() => plain('secret-{{ env.UNDEFINED_VAR }}')).toThrow(/^(?!.*secret)/);
  });
});

describe('template values in a URL', () => {
  const url = (t: string): string => renderTemplate(t, n, env, 'url', 'webhook url').text;
  it('percent-encodes notification values, keeping RFC 3986 unreserved characters', () => {
    expect(url('https://h.example/x/{{ notification.payload.v }}?q={{ notification.identifier.class }}')).toBe(
      'https://h.example/x/a%27b%24%28x%29?q=od',
    );
    expect(percentEncode('a/b?c=d&e f~._-')).toBe('a%2Fb%3Fc%3Dd%26e%20f~._-');
  });
  it('refuses a notification value in the scheme or authority, allows env there', () => {
    expect(kind(() => url('https://{{ notification.identifier.class }}/hook'))).toBe('ValueInUrlAuthority');
    expect(kind(() => url('{{ notification.identifier.class }}'))).toBe('ValueInUrlAuthority');
    expect(url('{{ env.WEBHOOK_URL }}&s={{ notification.sequence }}')).toBe('https://hooks.example/notify?token=xxx&s=42');
  });
});

describe('template values in a shell command', () => {
  const sh = (t: string): string => renderTemplate(t, n, env, 'shell', 'command').text;
  it('quotes a bare value as one literal argument', () => {
    expect(sh('run {{ notification.payload.v }}')).toBe(`run 'a'\\''b$(x)'`);
    expect(shellArgs(sh('run {{ notification.payload.v }}'))).toEqual(['run', "a'b$(x)"]);
    expect(sh('run {{ notification.sequence }}')).toBe("run '42'");
  });
  it('escapes inside single and double quotes', () => {
    expect(sh("run '{{ notification.payload.v }}'")).toBe(`run 'a'\\''b$(x)'`);
    expect(sh('run "{{ notification.payload.v }}"')).toBe(`run "a'b\\$(x)"`);
    expect(shellArgs(sh('run "x-{{ notification.payload.v }}-y"'))).toEqual(['run', "x-a'b$(x)-y"]);
  });
  it('quotes inside $( ), nested in double quotes', () => {
    const out = sh('run "$(echo {{ notification.payload.v }})"');
    expect(shellArgs(out)).toEqual(['run', "a'b$(x)"]);
  });
  it('allows assignments before the command and ignores quotes in a comment', () => {
    expect(sh('FOO={{ notification.event_type }} ./run.sh')).toBe("FOO='mars' ./run.sh");
    expect(sh("echo ok # it's {{ notification.sequence }}")).toContain("'42'");
  });
  it('refuses the constructs it does not follow and the dangerous places', () => {
    const refused = (t: string): string => kind(() => sh(t));
    expect(refused('cat <<EOF\nx\nEOF\nrun {{ notification.sequence }}')).toBe('ValueAfterUnsupportedShellSyntax');
    expect(refused('echo $(( 1 + 2 )) {{ notification.sequence }}')).toBe('ValueAfterUnsupportedShellSyntax');
    expect(refused('echo `date` {{ notification.sequence }}')).toBe('ValueAfterUnsupportedShellSyntax');
    expect(refused('case x in x) echo {{ notification.sequence }};; esac')).toBe('ValueAfterUnsupportedShellSyntax');
    expect(refused('echo ${{ notification.sequence }}')).toBe('ValueAfterUnsupportedShellSyntax');
    expect(refused('echo ${X:-{{ notification.sequence }}}')).toBe('ValueAfterUnsupportedShellSyntax');
    expect(refused('echo x > {{ notification.sequence }}')).toBe('ValueAfterUnsupportedShellSyntax');
    expect(refused('{{ notification.event_type }} --flag')).toBe('ValueAfterUnsupportedShellSyntax');
    expect(refused('true; {{ notification.event_type }}')).toBe('ValueAfterUnsupportedShellSyntax');
    // Before the construct is fine, and env values are fine anywhere.
    expect(refused('run {{ notification.sequence }}; echo `date`')).toBe('ok');
    expect(refused('echo `date` {{ env.API_TOKEN }}')).toBe('ok');
  });
});
