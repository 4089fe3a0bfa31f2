import type { Command } from 'commander';
import { UsageError } from './errors.js';

/** The shells the aviso client generates completions for (clap_complete's). */
export const SHELLS = ['bash', 'elvish', 'fish', 'powershell', 'zsh'] as const;

interface Node {
  readonly path: string[];
  readonly subcommands: string[];
  readonly flags: string[];
}

/** Walks the command tree, so the scripts list exactly the commands and flags the parser knows. */
function walk(command: Command, path: string[], globalFlags: string[], out: Node[]): void {
  const flags = [...globalFlags, ...command.options.flatMap((o) => [o.short, o.long].filter((f): f is string => !!f))];
  out.push({ path, subcommands: command.commands.map((c) => c.name()), flags });
  for (const sub of command.commands) walk(sub, [...path, sub.name()], path.length === 0 ? flags : globalFlags, out);
}

function bash(nodes: Node[]): string {
  const table = (pick: (n: Node) => string[]): string =>
    nodes.map((n) => `    "${n.path.join(' ')}") echo "${pick(n).join(' ')}" ;;`).join('\n');
  return `# bash completion for aviso: source <(aviso completions bash)
_aviso_subs() {
  case "$1" in
${table((n) => n.subcommands)}
  esac
}
_aviso_words() {
  case "$1" in
${table((n) => [...n.subcommands, ...n.flags])}
  esac
}
_aviso() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" w i
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in -*) continue ;; esac
    case " $(_aviso_subs "$path") " in *" $w "*) path="\${path:+$path }$w" ;; esac
  done
  COMPREPLY=( $(compgen -W "$(_aviso_words "$path")" -- "$cur") )
}
complete -o default -F _aviso aviso
`;
}

function zsh(nodes: Node[]): string {
  return `#compdef aviso
# zsh completion for aviso: aviso completions zsh > "\${fpath[1]}/_aviso"
_aviso() {
  local path="" w
  for w in \${words[2,CURRENT-1]}; do
    [[ $w == -* ]] || path="\${path:+$path }$w"
  done
  local -a choices
  case "$path" in
${nodes.map((n) => `    "${n.path.join(' ')}") choices=(${[...n.subcommands, ...n.flags].join(' ')}) ;;`).join('\n')}
  esac
  compadd -a choices
  _files
}
compdef _aviso aviso
`;
}

function fish(nodes: Node[]): string {
  const lines = ['# fish completion for aviso: aviso completions fish > ~/.config/fish/completions/aviso.fish', 'complete -c aviso -f'];
  for (const n of nodes) {
    const cond = n.path.length === 0 ? '__fish_use_subcommand' : `__fish_seen_subcommand_from ${n.path[n.path.length - 1]}`;
    for (const sub of n.subcommands) lines.push(`complete -c aviso -n '${cond}' -a ${sub}`);
    for (const flag of n.flags.filter((f) => f.startsWith('--'))) lines.push(`complete -c aviso -n '${cond}' -l ${flag.slice(2)}`);
  }
  return `${lines.join('\n')}\n`;
}

function powershell(nodes: Node[]): string {
  const table = nodes
    .map((n) => `    '${n.path.join(' ')}' = @(${[...n.subcommands, ...n.flags].map((w) => `'${w}'`).join(', ')})`)
    .join('\n');
  return `# PowerShell completion for aviso: aviso completions powershell | Out-String | Invoke-Expression
Register-ArgumentCompleter -Native -CommandName aviso -ScriptBlock {
  param($wordToComplete, $commandAst, $cursorPosition)
  $choices = @{
${table}
  }
  $subs = @{
${nodes.map((n) => `    '${n.path.join(' ')}' = @(${n.subcommands.map((w) => `'${w}'`).join(', ')})`).join('\n')}
  }
  $path = ''
  foreach ($element in $commandAst.CommandElements | Select-Object -Skip 1) {
    $word = $element.ToString()
    if ($element.Extent.StartOffset -ge $cursorPosition) { break }
    if ($word.StartsWith('-')) { continue }
    if ($subs[$path] -contains $word) { $path = ($path + ' ' + $word).Trim() }
  }
  $choices[$path] | Where-Object { $_ -like "$wordToComplete*" } | ForEach-Object {
    [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)
  }
}
`;
}

function elvish(nodes: Node[]): string {
  const quote = (w: string): string => `'${w}'`;
  return `# elvish completion for aviso: eval (aviso completions elvish | slurp)
use str
set edit:completion:arg-completer[aviso] = {|@words|
  var choices = [
${nodes.map((n) => `    &${quote(n.path.join(' '))}=[${[...n.subcommands, ...n.flags].map(quote).join(' ')}]`).join('\n')}
  ]
  var subs = [
${nodes.map((n) => `    &${quote(n.path.join(' '))}=[${n.subcommands.map(quote).join(' ')}]`).join('\n')}
  ]
  var path = ''
  for word $words[1..-1] {
    if (not (str:has-prefix $word '-')) {
      if (has-value $subs[$path] $word) {
        if (eq $path '') { set path = $word } else { set path = $path' '$word }
      }
    }
  }
  all $choices[$path]
}
`;
}

export function completionScript(program: Command, shell: string): string {
  const nodes: Node[] = [];
  walk(program, [], [], nodes);
  switch (shell) {
    case 'bash':
      return bash(nodes);
    case 'zsh':
      return zsh(nodes);
    case 'fish':
      return fish(nodes);
    case 'powershell':
      return powershell(nodes);
    case 'elvish':
      return elvish(nodes);
    default:
      throw new UsageError(`unsupported shell "${shell}" (supported: ${SHELLS.join(', ')})`);
  }
}
